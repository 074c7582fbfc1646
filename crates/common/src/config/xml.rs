//! Hadoop's `*-site.xml` resources as Hadoop's `Configuration` parses them: a
//! `<configuration>` root of `<property>` elements with `<name>`, `<value>` and
//! `<final>` children (or the same as attributes), and XInclude `<include href=…>`
//! elements (relative to the including file, with an optional `<fallback>`); and
//! [`site_xml`], the one writer of that format (for Hadoop's own programs).

use std::path::{Path, PathBuf};

use crate::error::ConfigError;

/// One property as a resource states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    pub name: String,
    /// `None` when the property has no `<value>` (it then sets nothing).
    pub value: Option<String>,
    pub is_final: bool,
    /// The file and 1-based line of the `<property>` element.
    pub file: PathBuf,
    pub line: u32,
}

/// How deep `<include>`s may nest (a loop of includes ends here).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Every property of the XML file at `path`, includes expanded in place, in order.
pub fn read(path: &Path) -> Result<Vec<Property>, ConfigError> {
    let mut out = Vec::new();
    read_into(path, 0, &mut out)?;
    Ok(out)
}

fn read_into(path: &Path, depth: usize, out: &mut Vec<Property>) -> Result<(), ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Read {
        path: path.display().to_string(),
        cause,
    })?;
    let parse_error = |message: String| ConfigError::Parse {
        path: path.display().to_string(),
        message,
    };
    let doc = roxmltree::Document::parse(&text).map_err(|e| ConfigError::NotXml {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let root = doc.root_element();
    if root.tag_name().name() != "configuration" {
        return Err(parse_error(format!(
            "bad conf file: top-level element not <configuration> but <{}>",
            root.tag_name().name()
        )));
    }
    let line_of = |node: roxmltree::Node| doc.text_pos_at(node.range().start).row;
    for node in root.children().filter(|n| n.is_element()) {
        match node.tag_name().name() {
            "property" => {
                let mut name = node.attribute("name").map(str::to_string);
                let mut value = node.attribute("value").map(str::to_string);
                let mut is_final = node.attribute("final").is_some_and(|f| f.trim() == "true");
                for field in node.children().filter(|n| n.is_element()) {
                    let text = || field.text().unwrap_or("").to_string();
                    match field.tag_name().name() {
                        "name" => name = Some(text().trim().to_string()),
                        "value" => value = Some(text()),
                        "final" => is_final = text().trim() == "true",
                        _ => {}
                    }
                }
                let name = name.filter(|n| !n.is_empty()).ok_or_else(|| {
                    parse_error(format!(
                        "line {}: a <property> without <name>",
                        line_of(node)
                    ))
                })?;
                out.push(Property {
                    name,
                    value,
                    is_final,
                    file: path.to_path_buf(),
                    line: line_of(node),
                });
            }
            "include" => include(path, node, depth, out)?,
            // Hadoop ignores other elements (descriptions, comments as elements).
            _ => {}
        }
    }
    Ok(())
}

/// `<include href="other.xml"><fallback/></include>`: the included file's properties
/// here; a missing file is an error unless a `<fallback>` is given.
fn include(
    path: &Path,
    node: roxmltree::Node,
    depth: usize,
    out: &mut Vec<Property>,
) -> Result<(), ConfigError> {
    let href = node.attribute("href").unwrap_or("");
    let target = path.parent().unwrap_or(Path::new(".")).join(href);
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(ConfigError::Parse {
            path: path.display().to_string(),
            message: format!("includes nested deeper than {MAX_INCLUDE_DEPTH} at '{href}'"),
        });
    }
    if !target.is_file() {
        let has_fallback = node
            .children()
            .any(|c| c.is_element() && c.tag_name().name() == "fallback");
        if has_fallback {
            return Ok(());
        }
        return Err(ConfigError::Parse {
            path: path.display().to_string(),
            message: format!("Fetch fail on include for '{href}' with no fallback"),
        });
    }
    read_into(&target, depth + 1, out)
}

/// A client's `log4j.properties`, as a Hadoop installation's `etc/hadoop` starts with:
/// INFO and above to stderr. Hadoop's jars carry none, and without one Hadoop's tools
/// print `log4j:WARN No appenders could be found` and no log at all.
pub const CLIENT_LOG4J_PROPERTIES: &str = "\
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n
";

/// A `<configuration>` document of `properties`, in order: a `*-site.xml` file that
/// Hadoop's own programs (and [`read`]) take.
pub fn site_xml(properties: &[(&str, String)]) -> String {
    let body: String = properties
        .iter()
        .map(|(name, value)| {
            format!(
                "  <property><name>{}</name><value>{}</value></property>\n",
                escape(name),
                escape(value)
            )
        })
        .collect();
    format!("<?xml version=\"1.0\"?>\n<configuration>\n{body}</configuration>\n")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_site_reads_back_escaped_and_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("yarn-site.xml");
        let text = site_xml(&[("a.b", "x<y & z>w".to_string()), ("c.d", "2".to_string())]);
        std::fs::write(&path, text).unwrap();
        let props = read(&path).unwrap();
        let pairs: Vec<(&str, Option<&str>)> = props
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_deref()))
            .collect();
        assert_eq!(pairs, [("a.b", Some("x<y & z>w")), ("c.d", Some("2"))]);
    }

    #[test]
    fn properties_parse_with_lines_finals_and_includes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("extra.xml"),
            "<configuration><property><name>x.included</name><value>1</value></property></configuration>",
        )
        .unwrap();
        let site = dir.path().join("hdfs-site.xml");
        std::fs::write(
            &site,
            r#"<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<configuration xmlns:xi="http://www.w3.org/2001/XInclude">
  <property>
    <name> dfs.replication </name>
    <value>2</value>
    <final>true</final>
    <description>two copies</description>
  </property>
  <property name="dfs.blocksize" value="64m"/>
  <property><name>no.value</name></property>
  <xi:include href="extra.xml"/>
  <xi:include href="missing.xml"><xi:fallback/></xi:include>
</configuration>
"#,
        )
        .unwrap();
        let props = read(&site).unwrap();
        let names: Vec<&str> = props.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["dfs.replication", "dfs.blocksize", "no.value", "x.included"]
        );
        assert_eq!(props[0].value.as_deref(), Some("2"));
        assert!(props[0].is_final && !props[1].is_final);
        assert_eq!(props[0].line, 4);
        assert_eq!(props[1].value.as_deref(), Some("64m"));
        assert_eq!(props[2].value, None);
        assert_eq!(props[3].file, dir.path().join("extra.xml"));

        std::fs::write(
            &site,
            "<configuration><include href=\"gone.xml\"/></configuration>",
        )
        .unwrap();
        assert!(read(&site).unwrap_err().to_string().contains("no fallback"));
        std::fs::write(&site, "<conf/>").unwrap();
        assert!(read(&site).is_err());
        std::fs::write(&site, "<configuration><property>").unwrap();
        assert!(read(&site).is_err());
    }
}
