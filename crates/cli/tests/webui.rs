//! The web UIs in a browser: headless Chromium (Debian's `chromium`, installed by
//! `.ci/run`) loads every page of a `tusk local up` cluster of real processes after a
//! wordcount job has run, and the test reads the DOM the browser built, as a person
//! would see it: a DataNode row with its disk %, a NodeManager row with its
//! Potential-Reception, the job's Gantt chart, the file browser listing the job's
//! output. Every page is also saved as a screenshot under
//! `$CARGO_TARGET_TMPDIR/webui-screenshots/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const CHROMIUM: &str = "chromium";

#[path = "support/run_tusk.rs"]
mod run_tusk;

/// Runs `tusk ARGS` with `TUSK_HOME=home`; panics on failure or after `timeout`.
fn tusk(home: &Path, args: &[&str], timeout: Duration) -> String {
    let run = run_tusk::tusk_within(home, args, timeout);
    assert!(run.code == 0, "tusk {args:?} failed: {}", run.stderr);
    run.stdout
}

/// A cluster that is stopped when the test ends, however it ends.
struct Cluster {
    home: tempfile::TempDir,
}

impl Cluster {
    fn state(&self) -> PathBuf {
        self.home.path().join("cluster")
    }

    fn http(&self, daemon: &str) -> String {
        let file = self.state().join(format!("{daemon}.http-addr"));
        std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            .trim()
            .to_string()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let state = self.state();
        let _ = Command::new(env!("CARGO_BIN_EXE_tusk"))
            .args(["local", "down", "--dir", state.to_str().unwrap()])
            .env("TUSK_HOME", self.home.path())
            .status();
    }
}

/// The browser, when there is one; CI installs it, so there a missing one fails.
fn browser_available() -> bool {
    let found = Command::new(CHROMIUM)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have chromium (.ci/run installs it)"
        );
        eprintln!("SKIPPED: no `{CHROMIUM}` here (apt-get install chromium)");
    }
    found
}

/// Headless Chromium with a profile of its own under `profile`.
fn chromium(profile: &Path, args: &[&str]) -> std::process::Output {
    Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run chromium")
}

/// Loads `url`, saves a screenshot as `<out>/<name>.png` and returns the DOM.
fn load(profile: &Path, out: &Path, name: &str, url: &str) -> String {
    let dom = chromium(profile, &["--dump-dom", url]);
    assert!(
        dom.status.success(),
        "chromium --dump-dom {url}: {}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8(dom.stdout).unwrap();
    assert!(dom.contains("<header>"), "{url} rendered a page: {dom}");
    let png = out.join(format!("{name}.png"));
    let shot = chromium(
        profile,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1400,1000",
            url,
        ],
    );
    assert!(shot.status.success() && png.exists(), "screenshot of {url}");
    dom
}

/// The tables of page `dom` wider than their box in a window `width` px wide (the
/// box then clips them, the scroll bar hidden): "header: table px > box px" each.
fn clipped_tables(profile: &Path, dom: &str, width: u32) -> Vec<String> {
    const MEASURE: &str =
        "<script>var out=[];document.querySelectorAll('table').forEach(function(t){\
        var box=t.parentElement.clientWidth;if(t.offsetWidth>box){\
        out.push(t.querySelector('tr').textContent+': '+t.offsetWidth+' px > '+box+' px');}});\
        var p=document.createElement('pre');p.id='clipped';p.textContent=out.join('\\n');\
        document.body.appendChild(p);</script>";
    let file = profile.join("measured.html");
    std::fs::write(&file, dom.replace("</body>", &format!("{MEASURE}</body>"))).unwrap();
    let measured = chromium(
        profile,
        &[
            "--dump-dom",
            &format!("--window-size={width},900"),
            &format!("file://{}", file.display()),
        ],
    );
    let measured = String::from_utf8_lossy(&measured.stdout);
    let found = measured
        .split("<pre id=\"clipped\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("no measurement in {measured}"));
    found
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The first `prefix` followed by digits and underscores in `text`.
fn find_id(text: &str, prefix: &str) -> Option<String> {
    let start = text.find(prefix)?;
    let id: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    Some(id)
}

#[test]
fn every_page_renders_in_a_browser_with_a_job_done() {
    if !browser_available() {
        return;
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("webui-screenshots");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let profile = tempfile::tempdir().unwrap();

    let c = Cluster {
        home: tempfile::tempdir().unwrap(),
    };
    let home = c.home.path();
    let state = c.state();
    tusk(
        home,
        &run_tusk::local_up_args(&state),
        Duration::from_secs(60),
    );
    let input = home.join("words.txt");
    let words = "tusk hadoop yarn map reduce shuffle block node heartbeat\n".repeat(40_000);
    std::fs::write(&input, &words).unwrap();
    tusk(home, &["fs", "-mkdir", "/in"], Duration::from_secs(30));
    tusk(
        home,
        &[
            "fs",
            "-D",
            "dfs.blocksize=1m",
            "-put",
            input.to_str().unwrap(),
            "/in/words.txt",
        ],
        Duration::from_secs(30),
    );
    tusk(
        home,
        &["job", "run", "wordcount", "/in", "/out", "--reduces", "2"],
        Duration::from_secs(180),
    );

    let nn = format!("http://{}", c.http("namenode"));
    let rm = format!("http://{}", c.http("resourcemanager"));
    let dn = format!("http://{}", c.http("datanode0"));
    let nm = format!("http://{}", c.http("nodemanager0"));

    let overview = load(profile.path(), &out, "namenode-overview", &format!("{nn}/"));
    assert!(overview.contains("Live DataNodes") && overview.contains("Transactions per sync"));

    let datanodes = load(
        profile.path(),
        &out,
        "namenode-datanodes",
        &format!("{nn}/datanodes"),
    );
    let row = datanodes
        .split("<tr>")
        .find(|r| r.contains("In service"))
        .expect("a live DataNode row");
    let disk = row
        .split("class=\"bar")
        .nth(1)
        .and_then(|cell| cell.split("</span></span>").nth(1))
        .and_then(|rest| rest.split("</td>").next())
        .unwrap_or_else(|| panic!("a disk % bar in {row}"));
    let pct: f64 = disk
        .strip_suffix('%')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a disk % figure, not {disk:?}"));
    assert!((0.0..=100.0).contains(&pct), "{pct}");

    let browse = load(
        profile.path(),
        &out,
        "namenode-browse",
        &format!("{nn}/explorer?path=/out"),
    );
    assert!(
        browse.contains("part-r-00000") && browse.contains("_SUCCESS"),
        "{browse}"
    );
    let file = load(
        profile.path(),
        &out,
        "namenode-file",
        &format!("{nn}/explorer?path=/in/words.txt"),
    );
    assert!(
        file.contains("Blocks") && file.contains("op=OPEN"),
        "{file}"
    );
    let startup = load(
        profile.path(),
        &out,
        "namenode-startup",
        &format!("{nn}/startup"),
    );
    assert!(startup.contains("Loading fsimage") && startup.contains("Safe mode"));

    let nodes = load(
        profile.path(),
        &out,
        "resourcemanager-nodes",
        &format!("{rm}/cluster/nodes"),
    );
    assert!(nodes.contains("Potential-Reception") && nodes.contains("RUNNING"));
    assert!(nodes.contains("Timing mode"), "{nodes}");
    let apps = load(
        profile.path(),
        &out,
        "resourcemanager-apps",
        &format!("{rm}/cluster/apps"),
    );
    let app = find_id(&apps, "application_").expect("the job's application is listed");
    assert!(apps.contains("FINISHED"), "{apps}");
    let app_page = load(
        profile.path(),
        &out,
        "resourcemanager-app",
        &format!("{rm}/cluster/app/{app}"),
    );
    assert!(app_page.contains("SUCCEEDED"), "{app_page}");
    load(
        profile.path(),
        &out,
        "resourcemanager-cluster",
        &format!("{rm}/cluster"),
    );
    load(
        profile.path(),
        &out,
        "resourcemanager-scheduler",
        &format!("{rm}/cluster/scheduler"),
    );

    let job_id = app.replacen("application_", "job_", 1);
    let history = load(
        profile.path(),
        &out,
        "jobhistory",
        &format!("{rm}/jobhistory"),
    );
    assert!(history.contains(&job_id), "{history}");
    let job = load(
        profile.path(),
        &out,
        "job",
        &format!("{rm}/jobhistory/job/{job_id}"),
    );
    let gantt = job
        .split("id=\"gantt\"")
        .nth(1)
        .expect("the Gantt chart's container");
    assert!(
        gantt.contains("<svg") && gantt.contains("<rect"),
        "an SVG chart with bars"
    );
    assert!(
        job.contains("attempt_") && job.contains("shuffle") && job.contains("MAP_INPUT_RECORDS")
    );
    assert!(
        job.contains("Job Counters") && job.contains("TOTAL_LAUNCHED_MAPS"),
        "Hadoop's job counters group"
    );
    assert_eq!(
        clipped_tables(profile.path(), &job, 1400),
        Vec::<String>::new(),
        "every column of the job page shows at 1400 px"
    );

    let dn_page = load(profile.path(), &out, "datanode", &format!("{dn}/"));
    assert!(dn_page.contains("Volumes") && dn_page.contains("Bytes written"));
    let nm_page = load(profile.path(), &out, "nodemanager", &format!("{nm}/node"));
    assert!(nm_page.contains("Containers running"));

    let level = load(
        profile.path(),
        &out,
        "namenode-loglevel-set",
        &format!("{nn}/logLevel?log=tusk_rpc&level=DEBUG"),
    );
    assert!(
        level.contains("tusk_rpc=debug"),
        "the filter changed at run time: {level}"
    );
    for (name, url) in [
        ("namenode-conf", format!("{nn}/conf")),
        ("namenode-loglevel", format!("{nn}/logLevel")),
        ("resourcemanager-stacks", format!("{rm}/stacks")),
    ] {
        let page = load(profile.path(), &out, name, &url);
        assert!(
            page.contains("<table") || page.contains("<form"),
            "{name}: {page}"
        );
    }
    eprintln!("screenshots in {}", out.display());
}
