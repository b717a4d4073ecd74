//! The workload of `run --model MODEL`: a fitted model run as db_bench's mixgraph.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use kvlab_model::Model;
use kvlab_workload::{AnyWorkload, MixGraphWorkload, Properties};

use crate::phase::checks::usage;
use crate::phase::select::is_runner_or_store_property;

/// The mixgraph workload of `run --model MODEL`, with `-p` overrides of its flags (and
/// `-p key_model=prefix_dist|prefix_random|all_dist|all_random`, `-p decorrelate=true`).
pub fn model_work(path: &Path, props: &Properties) -> Result<AnyWorkload> {
    let model = Model::read(path).map_err(|e| usage(e.to_string()))?;
    let mut config = model.to_config();
    for (k, v) in props.iter() {
        if k == "workload" || is_runner_or_store_property(k) {
            continue;
        }
        // The paper's four key models and kvlab's decorrelation, as `-p workload=
        // kvlab.mixgraph` takes them.
        if k == "key_model" {
            let model = kvlab_model::fidelity::key_model_of(&v.trim().to_ascii_lowercase())
                .ok_or_else(|| {
                    usage(format!(
                        "property key_model: `{v}` is not one of prefix_dist, prefix_random, \
                         all_dist, all_random"
                    ))
                })?;
            config.key_model = Some(model);
            continue;
        }
        if k == "decorrelate" {
            config.decorrelate = matches!(v.trim(), "true" | "1" | "yes");
            continue;
        }
        let known = config
            .set_flag(k, v.trim())
            .map_err(|e| usage(e.to_string()))?;
        if !known {
            return Err(usage(format!(
                "property `{k}` is not a mixgraph flag (a --model run takes mixgraph flags)"
            )));
        }
    }
    let w = MixGraphWorkload::new(config).map_err(|e| usage(e.to_string()))?;
    Ok(AnyWorkload::MixGraph(Arc::new(w)))
}
