//! Server-rendered HTML for the daemons' pages: one layout (header, navigation, a
//! little CSS, optional live refresh), escaping, and the few building blocks every
//! page uses (figure cards, tables, bars). No front-end build: each page is a string.

use std::fmt::Write as _;

use axum::response::Html;

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes an id made of `_`-joined parts (`attempt_1795811038087_0002_m_000001_0`)
/// with a line-break opportunity after each `_`: a table column of such ids then
/// narrows to its longest part instead of pushing the table past the window.
pub fn breakable_id(id: &str) -> String {
    escape(id).replace('_', "_<wbr>")
}

/// Percent-encodes a path or query value for a link (everything but unreserved
/// characters and `/`).
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// One page of a daemon's web UI.
pub struct Page<'a> {
    /// `NameNode`, `ResourceManager`, ...: the header's first word.
    pub daemon: &'a str,
    /// The page's own title (also the `<title>`).
    pub title: &'a str,
    /// Links in the header: (href, label).
    pub nav: &'a [(&'a str, &'a str)],
    /// Reload the page every this many seconds (0 = never); a checkbox turns it off.
    pub refresh_secs: u32,
}

const STYLE: &str = r#"
:root { --ink:#1d2430; --muted:#5b6577; --line:#dde2ea; --bg:#f6f7f9; --accent:#2a6fdb; --ok:#2e9d5b; --warn:#d98a1c; --bad:#c8372d; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--ink); background:var(--bg); }
header { background:#1f2a3c; color:#fff; padding:10px 22px; display:flex; align-items:center; gap:26px; flex-wrap:wrap; }
header .brand { font-weight:700; font-size:17px; letter-spacing:.3px; }
header .brand small { font-weight:400; color:#b9c4d6; margin-left:6px; }
header nav a { color:#d7e1f2; text-decoration:none; margin-right:16px; }
header nav a:hover { color:#fff; text-decoration:underline; }
header .live { margin-left:auto; color:#b9c4d6; font-size:12px; }
main { padding:18px 22px 40px; max-width:1500px; }
h1 { font-size:21px; margin:4px 0 14px; }
h2 { font-size:16px; margin:26px 0 10px; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(170px,1fr)); gap:10px; }
.card { background:#fff; border:1px solid var(--line); border-radius:6px; padding:10px 12px; }
.card .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.4px; }
.card .value { font-size:20px; font-weight:600; margin-top:2px; }
.card .value.bad { color:var(--bad); } .card .value.warn { color:var(--warn); } .card .value.ok { color:var(--ok); }
.wide { overflow-x:auto; max-width:100%; }
table { border-collapse:collapse; background:#fff; border:1px solid var(--line); width:100%; }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#eef1f6; font-weight:600; font-size:12.5px; color:#33405a; white-space:nowrap; }
tr:nth-child(even) td { background:#fafbfd; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td code, p code { background:#eef1f6; padding:1px 4px; border-radius:3px; }
a { color:var(--accent); }
.bar { display:inline-block; width:90px; height:10px; background:#e6e9ef; border-radius:5px; overflow:hidden; vertical-align:middle; margin-right:6px; }
.bar > span { display:block; height:100%; background:var(--ok); }
.bar.warn > span { background:var(--warn); } .bar.bad > span { background:var(--bad); }
.tag { display:inline-block; white-space:nowrap; padding:1px 7px; border-radius:9px; font-size:12px; background:#e6e9ef; color:#33405a; margin:1px 2px 1px 0; }
.tag.ok { background:#dff3e6; color:#1f6e3f; } .tag.warn { background:#fbecd5; color:#8a5a10; } .tag.bad { background:#f8dcd9; color:#8f241c; }
.muted { color:var(--muted); }
.kv th { width:280px; }
form.inline input[type=text] { width:380px; padding:4px 6px; }
svg { max-width:100%; height:auto; background:#fff; border:1px solid var(--line); }
"#;

/// The daemons' icon (`/favicon.ico`, linked from every page): a tusk on the header's
/// colour. SVG, which browsers take as a favicon whatever the path's extension.
pub const FAVICON_SVG: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f2a3c"/><path d="M8 7c0 11 5 18 17 18-7-3-10-9-10-18z" fill="#f4efe2"/></svg>"##;

const REFRESH_SCRIPT: &str = r#"<script>
(function(){var box=document.getElementById('live');var key='tusk-live';
box.checked=localStorage.getItem(key)!=='off';
box.onchange=function(){localStorage.setItem(key,box.checked?'on':'off');};
setInterval(function(){if(box.checked){location.reload();}},REFRESH*1000);})();
</script>"#;

impl Page<'_> {
    /// The whole document around `body`.
    pub fn render(&self, body: &str) -> Html<String> {
        let mut html = String::with_capacity(body.len() + 4096);
        let _ = write!(
            html,
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title} · {daemon} · Tusk</title>\
             <link rel=\"icon\" href=\"/favicon.ico\" type=\"image/svg+xml\"><style>{STYLE}</style></head><body>\
             <header><span class=\"brand\">Tusk<small>{daemon}</small></span><nav>",
            title = escape(self.title),
            daemon = escape(self.daemon),
        );
        for (href, label) in self.nav {
            let _ = write!(html, "<a href=\"{}\">{}</a>", escape(href), escape(label));
        }
        html.push_str("</nav>");
        if self.refresh_secs > 0 {
            let _ = write!(
                html,
                "<label class=\"live\"><input type=\"checkbox\" id=\"live\"> refresh every {} s</label>",
                self.refresh_secs
            );
        }
        let _ = write!(
            html,
            "</header><main><h1>{}</h1>{body}</main>",
            escape(self.title)
        );
        if self.refresh_secs > 0 {
            html.push_str(&REFRESH_SCRIPT.replace("REFRESH", &self.refresh_secs.to_string()));
        }
        html.push_str("</body></html>");
        Html(html)
    }
}

/// A grid of labelled figures; a figure's class (`ok`, `warn`, `bad`, or empty)
/// colours its value.
pub fn cards(figures: &[(&str, String, &str)]) -> String {
    let mut out = String::from("<div class=\"cards\">");
    for (label, value, class) in figures {
        let _ = write!(
            out,
            "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value {}\">{}</div></div>",
            escape(label),
            class,
            escape(value)
        );
    }
    out.push_str("</div>");
    out
}

/// A column of a [`table`]: its heading, and whether it holds numbers (right-aligned).
pub struct Column<'a>(pub &'a str, pub bool);

/// A table whose cells are HTML already (escape text cells with [`escape`]).
pub fn table(columns: &[Column], rows: &[Vec<String>]) -> String {
    // A table wider than the window scrolls on its own, not the page.
    let mut out = String::from("<div class=\"wide\"><table><thead><tr>");
    for Column(name, num) in columns {
        let _ = write!(
            out,
            "<th{}>{}</th>",
            if *num { " class=\"num\"" } else { "" },
            escape(name)
        );
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr>");
        for (cell, Column(_, num)) in row.iter().zip(columns) {
            let _ = write!(
                out,
                "<td{}>{cell}</td>",
                if *num { " class=\"num\"" } else { "" }
            );
        }
        out.push_str("</tr>");
    }
    if rows.is_empty() {
        let _ = write!(
            out,
            "<tr><td colspan=\"{}\" class=\"muted\">none</td></tr>",
            columns.len()
        );
    }
    out.push_str("</tbody></table></div>");
    out
}

/// A two-column table of names and (already escaped) values.
pub fn key_values(pairs: &[(&str, String)]) -> String {
    let mut out = String::from("<table class=\"kv\"><tbody>");
    for (key, value) in pairs {
        let _ = write!(out, "<tr><th>{}</th><td>{value}</td></tr>", escape(key));
    }
    out.push_str("</tbody></table>");
    out
}

/// A percentage as a bar and its figure, amber from 70 %, red from 90 %.
pub fn percent_bar(pct: f64) -> String {
    let shown = pct.clamp(0.0, 100.0);
    let class = if shown >= 90.0 {
        " bad"
    } else if shown >= 70.0 {
        " warn"
    } else {
        ""
    };
    format!("<span class=\"bar{class}\"><span style=\"width:{shown:.0}%\"></span></span>{pct:.1}%")
}

/// A small coloured label.
pub fn tag(text: &str, class: &str) -> String {
    format!("<span class=\"tag {class}\">{}</span>", escape(text))
}

/// `2.4 s`, `3 min 5 s`, `1 h 2 min`: an age for people.
pub fn age(millis: u64) -> String {
    let secs = millis / 1000;
    if millis < 10_000 {
        format!("{:.1} s", millis as f64 / 1000.0)
    } else if secs < 120 {
        format!("{secs} s")
    } else if secs < 7200 {
        format!("{} min {} s", secs / 60, secs % 60)
    } else {
        format!("{} h {} min", secs / 3600, secs % 3600 / 60)
    }
}

/// Milliseconds since the epoch as `2026-11-24 08:03:43 UTC`.
pub fn utc_time(millis: u64) -> String {
    if millis == 0 {
        return "—".into();
    }
    let (y, m, d, hh, mm, ss) = tusk_common::calendar::civil(millis);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02} UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_links_encoded() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(url_encode("/user/a b/ü"), "/user/a%20b/%C3%BC");
    }

    #[test]
    fn a_page_carries_its_title_navigation_and_refresh() {
        let page = Page {
            daemon: "NameNode",
            title: "Overview <1>",
            nav: &[("/", "Overview")],
            refresh_secs: 5,
        };
        let Html(html) = page.render("<p>body</p>");
        assert!(html.contains("<h1>Overview &lt;1&gt;</h1>"));
        assert!(html.contains("<a href=\"/\">Overview</a>"));
        assert!(html.contains("*1000") && html.contains("5*1000"));
        assert!(html.contains("<p>body</p>"));
    }

    #[test]
    fn figures_read_as_people_write_them() {
        assert_eq!(age(2_400), "2.4 s");
        assert_eq!(age(185_000), "3 min 5 s");
        assert_eq!(utc_time(1_795_939_423_000), "2026-11-29 08:03:43 UTC");
        assert!(percent_bar(95.0).contains("bar bad"));
        assert!(percent_bar(12.5).contains("12.5%"));
    }
}
