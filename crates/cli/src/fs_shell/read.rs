//! `-head`, `-tail [-f] [-s ms]` and `-text`: Hadoop's `Head`, `Tail` and `Display.Text`.
//! `-text` decodes gzip (by its magic bytes, as Hadoop does), `.deflate` files, and
//! uncompressed SequenceFiles of common Writables (`key\tvalue` per record, as Hadoop's
//! `TextRecordInputStream`); anything else is printed as it is.

use std::io::Write;
use std::time::Duration;

use tusk_client::FileReader;

use super::Shell;

/// How many bytes `-head` and `-tail` show (Hadoop's 1 KB).
const SHOWN: u64 = 1024;

impl Shell {
    /// Opens a file for a display verb; a directory is Hadoop's "Is a directory".
    async fn open_file(&mut self, cmd: &str, operand: &str) -> Option<FileReader> {
        let path = self.resolve(operand);
        match self.client.stat(&path).await {
            Ok(s) if s.is_dir => {
                eprintln!("{cmd}: `{operand}': Is a directory");
                self.failed = true;
                return None;
            }
            Ok(_) => {}
            Err(e) => {
                self.report(cmd, operand, e);
                return None;
            }
        }
        match self.client.open(&path).await {
            Ok(r) => Some(r),
            Err(e) => {
                self.report(cmd, operand, e);
                None
            }
        }
    }

    pub(super) async fn head(&mut self, args: &[String]) -> Result<(), String> {
        let [operand] = args else {
            return Err(format!(
                "Illegal number of arguments: expected 1 but got {}",
                args.len()
            ));
        };
        let Some(mut r) = self.open_file("head", operand).await else {
            return Ok(());
        };
        let end = r.len().min(SHOWN);
        self.copy_range(&mut r, "head", operand, end).await;
        Ok(())
    }

    pub(super) async fn tail(&mut self, args: &[String]) -> Result<(), String> {
        let mut follow = false;
        let mut delay = Duration::from_secs(5);
        let mut rest = args;
        loop {
            match rest.first().map(String::as_str) {
                Some("-f") => follow = true,
                Some("-s") => {
                    let ms = rest
                        .get(1)
                        .and_then(|v| v.parse::<u64>().ok())
                        .ok_or("-s needs a sleep interval in milliseconds")?;
                    delay = Duration::from_millis(ms);
                    rest = &rest[1..];
                }
                _ => break,
            }
            rest = &rest[1..];
        }
        let [operand] = rest else {
            return Err(format!(
                "Illegal number of arguments: expected 1 but got {}",
                rest.len()
            ));
        };
        let Some(mut r) = self.open_file("tail", operand).await else {
            return Ok(());
        };
        let mut offset = r.len().saturating_sub(SHOWN);
        loop {
            r.seek(offset);
            let end = r.len();
            self.copy_range(&mut r, "tail", operand, end).await;
            offset = end;
            if !follow || self.failed {
                return Ok(());
            }
            // Hadoop's Tail re-opens the file each round to see what was appended.
            loop {
                tokio::time::sleep(delay).await;
                match self.open_file("tail", operand).await {
                    Some(next) if next.len() > offset => {
                        r = next;
                        break;
                    }
                    Some(_) => {}
                    None => return Ok(()),
                }
            }
        }
    }

    /// Writes the reader's bytes up to `end` to stdout.
    async fn copy_range(&mut self, r: &mut FileReader, cmd: &str, operand: &str, end: u64) {
        let mut out = std::io::stdout().lock();
        let mut buf = vec![0u8; 64 << 10];
        while r.position() < end {
            let want = ((end - r.position()) as usize).min(buf.len());
            match r.read(&mut buf[..want]).await {
                Ok(0) => break,
                Ok(n) => {
                    if out.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    drop(out);
                    return self.report(cmd, operand, e);
                }
            }
        }
        let _ = out.flush();
    }

    pub(super) async fn text(&mut self, args: &[String]) -> Result<(), String> {
        for operand in args.iter().filter(|a| a.as_str() != "-ignoreCrc") {
            let Some(mut r) = self.open_file("text", operand).await else {
                continue;
            };
            if let Err(e) = self.text_one(&mut r, operand).await {
                eprintln!("text: {e}");
                self.failed = true;
            }
        }
        Ok(())
    }

    async fn text_one(&mut self, r: &mut FileReader, operand: &str) -> Result<(), String> {
        let mut head = [0u8; 3];
        let n = super::read_full(r, &mut head, operand).await?;
        r.seek(0);
        let stdout = std::io::stdout().lock();
        match &head[..n] {
            [0x1f, 0x8b, ..] => pump(r, flate2::write::MultiGzDecoder::new(stdout), operand).await,
            b"SEQ" => super::seqfile::print_records(r, operand).await,
            _ if operand.ends_with(".deflate") => {
                pump(r, flate2::write::ZlibDecoder::new(stdout), operand).await
            }
            _ => pump(r, stdout, operand).await,
        }
    }
}

/// Feeds the whole file through `sink` (a decoder writing to stdout, or stdout).
async fn pump<W: Write>(r: &mut FileReader, mut sink: W, operand: &str) -> Result<(), String> {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = r
            .read(&mut buf)
            .await
            .map_err(|e| super::describe(operand, &e))?;
        if n == 0 {
            break;
        }
        if let Err(e) = sink.write_all(&buf[..n]) {
            return match e.kind() {
                std::io::ErrorKind::BrokenPipe => Ok(()),
                _ => Err(format!("`{operand}': {e}")),
            };
        }
    }
    sink.flush().map_err(|e| format!("`{operand}': {e}"))
}
