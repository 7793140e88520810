//! The `runlog` binary: runs workflows and answers every question about a past run (see the
//! library, `runlog_cli`).

/// mimalloc: a replay or a run allocates and frees small strings by the million, and the
/// system allocator made a full replay 1.7 times slower (`cargo bench -p runlog-replay`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    runlog_cli::main()
}
