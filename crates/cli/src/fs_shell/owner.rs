//! `-chgrp [-R] GROUP PATH...`: Hadoop's `ChgrpCommand`, `-chown :GROUP` by another name.

use super::Shell;

impl Shell {
    pub(super) async fn chgrp(&mut self, args: &[String]) -> Result<(), String> {
        let (flags, ops) = super::flags(args, "R")?;
        let Some((group, paths)) = ops.split_first() else {
            return Err("-chgrp: Not enough arguments: expected 2 but got 0".into());
        };
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-_./@".contains(c);
        if group.is_empty() || !group.chars().all(allowed) {
            return Err(format!(
                "'{group}' does not match expected pattern for group"
            ));
        }
        let mut chown: Vec<String> = flags.iter().map(|f| format!("-{f}")).collect();
        chown.push(format!(":{group}"));
        chown.extend(paths.iter().cloned());
        self.chown(&chown).await
    }
}
