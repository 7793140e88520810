#!/bin/sh
# The agent of the starter workflow. A real one calls a model; runlog gives it the task
# ($RUNLOG_TASK), the attempt ($RUNLOG_ATTEMPT) and the feedback of the last one ($RUNLOG_FEEDBACK).
echo "Hello from $RUNLOG_TASK, attempt $RUNLOG_ATTEMPT" > greeting.txt
echo '{"summary": "wrote greeting.txt"}'
