//! `klaxon schema`, `export`, `diff` and `apply`: the configuration as a file you can review,
//! keep in version control and apply (`domain::config`). `export` and `diff` read the server's
//! REST API; `apply` writes through it with an instance-scoped service account's API key, one
//! step at a time in a safe order, so a run that stops part-way says what was done and a second
//! run finishes the job.

pub mod remote;
mod steps;
pub mod yaml;

use clap::Args;
use klaxon_domain::config::check::{check, Known};
use klaxon_domain::config::plan::{plan, Step};
use klaxon_domain::config::{json_schema, ConfigFile};
use remote::{Made, Remote};
use std::path::PathBuf;

#[derive(Args)]
pub struct ServerArgs {
    /// The Klaxon server, e.g. https://klaxon.example.com
    #[arg(long, env = "KLAXON_SERVER")]
    pub server: String,
    /// An API key: an instance-scoped service account's for `apply` (an administrator's
    /// works for `export` and `diff` too).
    #[arg(long, env = "KLAXON_API_KEY", hide_env_values = true)]
    pub api_key: String,
}

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub remote: ServerArgs,
    /// Write the file here instead of printing it.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

#[derive(Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub remote: ServerArgs,
    /// The configuration file (YAML).
    #[arg(short, long)]
    pub file: PathBuf,
    /// Also delete what the file's lists do not name (never incidents, alerts or teams).
    #[arg(long)]
    pub prune: bool,
    /// `apply` only: write new webhook URLs and signing secrets to this file (mode 0600)
    /// instead of printing them.
    #[arg(long)]
    pub secrets_file: Option<PathBuf>,
}

/// `klaxon schema`: the file's JSON Schema.
pub fn schema() -> String {
    serde_json::to_string_pretty(&json_schema()).expect("JSON") + "\n"
}

/// `klaxon export`.
pub async fn export(remote: &Remote) -> Result<String, String> {
    Ok(yaml::write(&remote.current().await?.0))
}

/// A file read and checked against the server, and the steps it needs.
pub struct Prepared {
    pub file: ConfigFile,
    pub steps: Vec<Step>,
}

/// Reads `text` and checks it against the server; every problem comes back at once, each with
/// its line, and nothing has changed.
pub async fn prepare(
    remote: &mut Remote,
    text: &str,
    prune: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Prepared, Vec<String>> {
    let parsed = yaml::read(text).map_err(|e| vec![e.to_string()])?;
    let (current, clock) = remote.current().await.map_err(|e| vec![e])?;
    let usernames = remote.usernames().await.map_err(|e| vec![e])?;
    let env_is_set = |var: &str| env(var).is_some_and(|v| !v.is_empty());
    let known = Known {
        usernames: &usernames,
        current: &current,
        at: clock,
        env_is_set: &env_is_set,
    };
    let problems = check(&parsed.file, &known);
    if !problems.is_empty() {
        return Err(problems
            .into_iter()
            .map(|p| {
                yaml::FileError {
                    line: parsed.line_of(&p.path),
                    path: p.path,
                    message: p.message,
                }
                .to_string()
            })
            .collect());
    }
    let steps = plan(&current, &parsed.file, prune, clock);
    Ok(Prepared {
        file: parsed.file,
        steps,
    })
}

/// What `apply` did.
pub struct Report {
    pub applied: Vec<String>,
    pub made: Vec<Made>,
    /// The step that failed, and why; the steps after it were not tried.
    pub failed: Option<(String, String)>,
    pub not_applied: Vec<String>,
}

pub async fn apply(
    remote: &mut Remote,
    steps: &[Step],
    env: &dyn Fn(&str) -> Option<String>,
) -> Report {
    let mut report = Report {
        applied: Vec::new(),
        made: Vec::new(),
        failed: None,
        not_applied: Vec::new(),
    };
    for step in steps {
        if report.failed.is_some() {
            report.not_applied.push(step.to_string());
            continue;
        }
        match remote.run(step, env).await {
            Ok(made) => {
                report.applied.push(step.to_string());
                report.made.extend(made);
            }
            Err(e) => report.failed = Some((step.to_string(), e)),
        }
    }
    remote.finish().await;
    report
}

fn read_file(path: &PathBuf) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn env_var(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// The commands' exit codes: 0 done (or nothing to do), 2 `diff` found changes, 1 failed.
pub async fn run_export(args: ExportArgs) -> Result<i32, String> {
    let remote = Remote::new(&args.remote.server, &args.remote.api_key)?;
    let text = export(&remote).await?;
    match args.output {
        Some(path) => std::fs::write(&path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(0)
}

fn refused(problems: Vec<String>, path: &std::path::Path) -> i32 {
    eprintln!("{}: refused, nothing was changed:", path.display());
    for p in problems {
        eprintln!("  {p}");
    }
    1
}

/// The file of `args` read and checked against its server, with the steps it needs; or, when
/// there is nothing to do or it is refused, the command's exit code (its reasons printed).
async fn planned(args: &PlanArgs) -> Result<Result<(Remote, Prepared), i32>, String> {
    let mut remote = Remote::new(&args.remote.server, &args.remote.api_key)?;
    let text = read_file(&args.file)?;
    let prepared = match prepare(&mut remote, &text, args.prune, &env_var).await {
        Ok(p) => p,
        Err(problems) => return Ok(Err(refused(problems, &args.file))),
    };
    if prepared.steps.is_empty() {
        println!("No changes: the server matches {}.", args.file.display());
        return Ok(Err(0));
    }
    Ok(Ok((remote, prepared)))
}

pub async fn run_diff(args: PlanArgs) -> Result<i32, String> {
    let (_, prepared) = match planned(&args).await? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    for step in &prepared.steps {
        println!("{step}");
    }
    println!("{} to change.", count(prepared.steps.len()));
    Ok(2)
}

fn count(n: usize) -> String {
    if n == 1 {
        "1 step".into()
    } else {
        format!("{n} steps")
    }
}

pub async fn run_apply(args: PlanArgs) -> Result<i32, String> {
    let (mut remote, prepared) = match planned(&args).await? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let report = apply(&mut remote, &prepared.steps, &env_var).await;
    for step in &report.applied {
        println!("done: {step}");
    }
    if !report.made.is_empty() {
        let lines: String = report
            .made
            .iter()
            .map(|m| format!("{}: {}\n", m.what, m.value))
            .collect();
        match &args.secrets_file {
            Some(path) => {
                write_private(path, &lines)?;
                println!(
                    "New webhook URLs and secrets (shown once) are in {}.",
                    path.display()
                );
            }
            None => print!("Shown once, keep them now:\n{lines}"),
        }
    }
    match report.failed {
        None => {
            println!("Applied {}.", count(report.applied.len()));
            Ok(0)
        }
        Some((step, why)) => {
            eprintln!("failed: {step}\n  {why}");
            for step in &report.not_applied {
                eprintln!("not applied: {step}");
            }
            eprintln!(
                "Applied {} of {}. Fix the cause and run apply again: it picks up where this stopped.",
                report.applied.len(),
                prepared.steps.len()
            );
            Ok(1)
        }
    }
}

/// Appends to `path`, created readable by its user only.
fn write_private(path: &std::path::Path, text: &str) -> Result<(), String> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options
        .open(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::io::Write::write_all(&mut f, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
