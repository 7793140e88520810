//! A variant file: an overlay on each recorded run's workflow. `[gateway.models]` maps a
//! model asked to the model that answers; `[all]` and `[task.ID]` replace task fields (`run`,
//! `test`, `eval`, `requires_testing`, `description`). Anything else is refused by name.

use super::ExperimentError;
use runlog_core::{RunState, TaskSpec};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    gateway: Gateway,
    all: Option<Fields>,
    #[serde(default)]
    task: BTreeMap<String, Fields>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Gateway {
    #[serde(default)]
    models: BTreeMap<String, String>,
}

/// The task fields a variant may replace.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    run: Option<String>,
    test: Option<String>,
    eval: Option<String>,
    requires_testing: Option<bool>,
    description: Option<String>,
}

impl Fields {
    fn onto(&self, spec: &mut TaskSpec) {
        if let Some(run) = &self.run {
            spec.run = Some(run.clone());
        }
        if let Some(test) = &self.test {
            spec.test = Some(test.clone());
        }
        if let Some(eval) = &self.eval {
            spec.eval = Some(eval.clone());
        }
        if let Some(required) = self.requires_testing {
            spec.requires_testing = required;
        }
        if let Some(description) = &self.description {
            spec.description.clone_from(description);
        }
    }
}

/// A variant file, read.
#[derive(Debug)]
pub struct Overlay {
    /// The model map, (asked, answering).
    pub models: Vec<(String, String)>,
    all: Option<Fields>,
    tasks: BTreeMap<String, Fields>,
}

impl Overlay {
    /// The variant in `text` (read from `file`); an unknown table or field is refused.
    pub fn parse(file: &str, text: &str) -> Result<Overlay, ExperimentError> {
        let parsed: File = toml::from_str(text).map_err(|e| ExperimentError::Variant {
            file: file.to_owned(),
            why: e.message().to_owned(),
        })?;
        Ok(Overlay {
            models: parsed.gateway.models.into_iter().collect(),
            all: parsed.all,
            tasks: parsed.task,
        })
    }

    /// The tasks it names in `[task.ID]` tables.
    pub fn tasks(&self) -> impl Iterator<Item = &str> {
        self.tasks.keys().map(String::as_str)
    }

    /// Every task of `state` with the overlay applied, or why it does not fit the run.
    pub fn apply(&self, state: &RunState) -> Result<Vec<TaskSpec>, String> {
        let missing: Vec<&str> = self
            .tasks()
            .filter(|id| state.task(&(*id).into()).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(format!("it has no task {}", missing.join(", ")));
        }
        Ok(state
            .tasks_in_order()
            .map(|t| {
                let mut spec = t.spec.clone();
                // A group's status follows its children: it runs nothing a variant could change.
                if spec.run.is_some() {
                    if let Some(all) = &self.all {
                        all.onto(&mut spec);
                    }
                }
                if let Some(own) = self.tasks.get(spec.id.as_str()) {
                    own.onto(&mut spec);
                }
                spec
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_field_is_named() {
        let e = Overlay::parse("v.toml", "[all]\nmodel = \"x\"\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `model`"), "{e}");
        let e = Overlay::parse("v.toml", "[gateway]\nmodel = {}\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `model`"), "{e}");
    }

    #[test]
    fn a_model_map_and_fields_are_read() {
        let o = Overlay::parse(
            "v.toml",
            "[gateway.models]\n\"a\" = \"b\"\n[task.build]\neval = \"judge --strict\"\n",
        )
        .unwrap();
        assert_eq!(o.models, vec![("a".to_owned(), "b".to_owned())]);
        assert_eq!(o.tasks().collect::<Vec<_>>(), vec!["build"]);
    }
}
