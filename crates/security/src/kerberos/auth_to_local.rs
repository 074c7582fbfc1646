//! Hadoop's `hadoop.security.auth_to_local`: the rules that map a Kerberos principal to
//! the local user name permission checks use, as `KerberosName` applies them (the
//! `hadoop` mechanism).
//!
//! Each line is `DEFAULT` or `RULE:[n:format](filter)s/pattern/replacement/[g][/L]`:
//! a rule applies to principals of `n` components; `format` builds a string from the
//! realm (`$0`) and the components (`$1`, `$2`); the optional `(filter)` regular
//! expression must match all of it; the optional substitution rewrites it (`g`: every
//! match), and `/L` lower-cases the result. The first rule that applies gives the
//! name; `DEFAULT` maps a principal of the local realm to its first component. When
//! none applies the principal is refused (`No rules applied to …`).

use regex::Regex;

use super::{KerberosError, Principal};

/// The rules, in order.
#[derive(Clone, Debug)]
pub struct AuthToLocal {
    rules: Vec<Rule>,
    /// The text they were parsed from (two rule sets are equal when it is).
    text: String,
}

impl PartialEq for AuthToLocal {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for AuthToLocal {}

#[derive(Clone, Debug)]
enum Rule {
    Default,
    Custom {
        components: usize,
        format: String,
        filter: Option<Regex>,
        substitution: Option<Substitution>,
        lower_case: bool,
    },
}

#[derive(Clone, Debug)]
struct Substitution {
    pattern: Regex,
    replacement: String,
    global: bool,
}

impl Default for AuthToLocal {
    /// `DEFAULT` alone, Hadoop's default.
    fn default() -> Self {
        AuthToLocal {
            rules: vec![Rule::Default],
            text: "DEFAULT".into(),
        }
    }
}

impl AuthToLocal {
    /// Parses the key's value: rules separated by white space (lines, as in Hadoop's
    /// XML).
    pub fn parse(text: &str) -> Result<AuthToLocal, KerberosError> {
        let bad = |why: &str| KerberosError::BadRule(format!("{why}: {}", text.trim()));
        let mut rules = Vec::new();
        let mut rest = text.trim_start();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("DEFAULT") {
                rules.push(Rule::Default);
                rest = after.trim_start();
                continue;
            }
            let after = rest
                .strip_prefix("RULE:[")
                .ok_or_else(|| bad("a rule starts with RULE:[ or is DEFAULT"))?;
            let (head, after) = after.split_once(']').ok_or_else(|| bad("no ]"))?;
            let (n, format) = head
                .split_once(':')
                .ok_or_else(|| bad("no n: in [n:format]"))?;
            let components: usize = n.parse().map_err(|_| bad("n is not a number"))?;
            let mut after = after;
            let filter = match after.strip_prefix('(') {
                Some(inner) => {
                    let (re, tail) = inner
                        .split_once(')')
                        .ok_or_else(|| bad("no ) after the filter"))?;
                    after = tail;
                    Some(whole(re).map_err(|e| bad(&e))?)
                }
                None => None,
            };
            let substitution = match after.strip_prefix("s/") {
                Some(inner) => {
                    let mut parts = inner.splitn(3, '/');
                    let pattern = parts.next().ok_or_else(|| bad("s/ without a pattern"))?;
                    let replacement = parts
                        .next()
                        .ok_or_else(|| bad("s/ without a replacement"))?;
                    let tail = parts.next().ok_or_else(|| bad("s/ not closed"))?;
                    let global = tail.starts_with('g');
                    after = if global { &tail[1..] } else { tail };
                    Some(Substitution {
                        pattern: Regex::new(pattern).map_err(|e| bad(&e.to_string()))?,
                        replacement: java_replacement(replacement),
                        global,
                    })
                }
                None => None,
            };
            // `/L` (or `L` right after a substitution's closing slash).
            let tail = after.strip_prefix('/').unwrap_or(after);
            let lower_case = tail.starts_with('L');
            if lower_case {
                after = &tail[1..];
            }
            if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
                return Err(bad("text after a rule"));
            }
            rules.push(Rule::Custom {
                components,
                format: format.to_string(),
                filter,
                substitution,
                lower_case,
            });
            rest = after.trim_start();
        }
        Ok(AuthToLocal {
            rules,
            text: text.split_whitespace().collect::<Vec<_>>().join("\n"),
        })
    }

    /// The local name of `principal`, whose realm is compared with `local_realm` for
    /// `DEFAULT`.
    pub fn short_name(
        &self,
        principal: &Principal,
        local_realm: &str,
    ) -> Result<String, KerberosError> {
        let components: Vec<&str> = std::iter::once(principal.primary.as_str())
            .chain(principal.instance.as_deref())
            .collect();
        for rule in &self.rules {
            if let Some(name) = rule.apply(principal, &components, local_realm) {
                return Ok(name);
            }
        }
        Err(KerberosError::NoRule(principal.to_string()))
    }
}

impl Rule {
    fn apply(
        &self,
        principal: &Principal,
        components: &[&str],
        local_realm: &str,
    ) -> Option<String> {
        match self {
            Rule::Default => (principal.realm == local_realm).then(|| principal.primary.clone()),
            Rule::Custom {
                components: n,
                format,
                filter,
                substitution,
                lower_case,
            } => {
                if *n != components.len() {
                    return None;
                }
                let base = fill(format, &principal.realm, components)?;
                if filter.as_ref().is_some_and(|f| !f.is_match(&base)) {
                    return None;
                }
                let name = match substitution {
                    Some(s) if s.global => {
                        s.pattern.replace_all(&base, &s.replacement).into_owned()
                    }
                    Some(s) => s.pattern.replace(&base, &s.replacement).into_owned(),
                    None => base,
                };
                // Hadoop refuses a result that still looks like a principal.
                if name.contains(['/', '@']) {
                    return None;
                }
                Some(if *lower_case {
                    name.to_lowercase()
                } else {
                    name
                })
            }
        }
    }
}

/// `format` with `$0` the realm and `$1`, `$2` the components; `None` when it names a
/// component the principal lacks.
fn fill(format: &str, realm: &str, components: &[&str]) -> Option<String> {
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek().and_then(|d| d.to_digit(10))) {
            ('$', Some(i)) => {
                chars.next();
                match i {
                    0 => out.push_str(realm),
                    i => out.push_str(components.get(i as usize - 1)?),
                }
            }
            _ => out.push(c),
        }
    }
    Some(out)
}

/// A filter matches the whole string, as Java's `Matcher.matches`.
fn whole(re: &str) -> Result<Regex, String> {
    Regex::new(&format!("^(?:{re})$")).map_err(|e| e.to_string())
}

/// Java's `$1` group references, braced for the regex crate (`$1x` would name group
/// `1x`).
fn java_replacement(replacement: &str) -> String {
    let mut out = String::new();
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            out.push_str(&format!("${{{digits}}}"));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(rules: &str, principal: &str) -> Result<String, KerberosError> {
        AuthToLocal::parse(rules)
            .unwrap()
            .short_name(&Principal::parse(principal).unwrap(), "EXAMPLE.COM")
    }

    #[test]
    fn default_maps_the_local_realm_only() {
        let rules = AuthToLocal::default();
        let p = |s| Principal::parse(s).unwrap();
        assert_eq!(
            rules
                .short_name(&p("alice@EXAMPLE.COM"), "EXAMPLE.COM")
                .unwrap(),
            "alice"
        );
        assert_eq!(
            rules
                .short_name(&p("nn/h1@EXAMPLE.COM"), "EXAMPLE.COM")
                .unwrap(),
            "nn"
        );
        assert!(rules
            .short_name(&p("alice@OTHER.ORG"), "EXAMPLE.COM")
            .is_err());
    }

    #[test]
    fn rules_as_hadoops_documentation_writes_them() {
        // Hadoop's service principals to the users the daemons run as, another realm's
        // users by name, and the rest by DEFAULT.
        let rules = "
            RULE:[2:$1@$0](nn@.*EXAMPLE.COM)s/.*/hdfs/
            RULE:[2:$1@$0](dn@.*EXAMPLE.COM)s/.*/hdfs/
            RULE:[1:$1@$0](.*@PARTNER.ORG)s/@.*//
            RULE:[2:$1_$2@$0](.*@EXAMPLE.COM)s/(.*)@EXAMPLE.COM/svc_$1/
            RULE:[1:$1](Admin.*)s/Admin/ADMIN_/L
            DEFAULT";
        assert_eq!(
            name(rules, "nn/host1.example.com@EXAMPLE.COM").unwrap(),
            "hdfs"
        );
        assert_eq!(name(rules, "dn/host2@EXAMPLE.COM").unwrap(), "hdfs");
        assert_eq!(name(rules, "bob@PARTNER.ORG").unwrap(), "bob");
        assert_eq!(
            name(rules, "oozie/host3@EXAMPLE.COM").unwrap(),
            "svc_oozie_host3"
        );
        assert_eq!(name(rules, "alice@EXAMPLE.COM").unwrap(), "alice");
        assert_eq!(name(rules, "AdminBob@EXAMPLE.COM").unwrap(), "admin_bob");
        assert_eq!(
            name(rules, "eve@ELSEWHERE.NET").unwrap_err().to_string(),
            "No rules applied to eve@ELSEWHERE.NET"
        );
        assert!(AuthToLocal::parse("RULE:[x:$1]").is_err());
        assert!(AuthToLocal::parse("RULES").is_err());
    }

    #[test]
    fn global_substitution_and_lower_case() {
        let rules = "RULE:[1:$1](.*)s/a/o/g/L";
        assert_eq!(name(rules, "BANANA@EXAMPLE.COM").unwrap(), "banana");
        assert_eq!(name(rules, "banana@EXAMPLE.COM").unwrap(), "bonono");
        // Without g only the first match.
        assert_eq!(
            name("RULE:[1:$1]s/a/o/", "banana@EXAMPLE.COM").unwrap(),
            "bonana"
        );
    }
}
