//! The `runlog` binary: runs workflows and answers every question about a past run (see the
//! library, `runlog_cli`).

fn main() -> std::process::ExitCode {
    runlog_cli::main()
}
