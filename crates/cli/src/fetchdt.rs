//! `tusk fetchdt`: Hadoop's `hdfs fetchdt` — a NameNode delegation token into a
//! credentials file (Hadoop's token storage, which `HADOOP_TOKEN_FILE_LOCATION` names),
//! and `--renew`, `--cancel`, `--print` of the tokens such a file holds.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tusk_client::{ClientOptions, DfsClient};
use tusk_security::delegation_token::{DelegationTokenIdentifier, HDFS_DELEGATION_KIND};
use tusk_security::Credentials;

#[derive(Args, Debug)]
pub struct FetchdtArgs {
    /// Who may renew the token (a principal or a short name).
    #[arg(long)]
    renewer: Option<String>,
    /// Renew the tokens in FILE.
    #[arg(long, conflicts_with_all = ["cancel", "print"])]
    renew: bool,
    /// Cancel the tokens in FILE.
    #[arg(long, conflicts_with = "print")]
    cancel: bool,
    /// Print the tokens in FILE.
    #[arg(long)]
    print: bool,
    /// The credentials file.
    file: PathBuf,
}

pub async fn run(mut conf: tusk_common::Configuration, args: FetchdtArgs) -> anyhow::Result<()> {
    crate::conf::ensure_default_fs(&mut conf);
    // The NameNode hands out, renews and cancels tokens to ticket holders only: this
    // client never authenticates with a token itself.
    let client = DfsClient::new(ClientOptions {
        delegation_token: None,
        ..ClientOptions::from_conf(&conf)?
    });
    if args.print || args.renew || args.cancel {
        let credentials = Credentials::read_file(&args.file)
            .with_context(|| format!("reading {}", args.file.display()))?;
        let tokens: Vec<_> = credentials
            .tokens_of_kind(HDFS_DELEGATION_KIND)
            .cloned()
            .collect();
        for token in &tokens {
            let id = DelegationTokenIdentifier::parse(&token.identifier)
                .map(|id| id.to_string())
                .unwrap_or_else(|e| format!("an unreadable identifier ({e})"));
            if args.print {
                println!("Token ({id}) for {}", token.service);
            } else if args.renew {
                let until = client.renew_delegation_token(token).await?;
                println!(
                    "Renewed token for {} until: {}",
                    token.service,
                    tusk_common::calendar::log4j_stamp(until)
                );
            } else {
                client.cancel_delegation_token(token).await?;
                println!("Cancelled token for {}", token.service);
            }
        }
        return Ok(());
    }
    let renewer = args.renewer.unwrap_or_default();
    let Some(token) = client.get_delegation_token(&renewer).await? else {
        anyhow::bail!("the NameNode issues no delegation tokens (Kerberos is off)");
    };
    let mut credentials = Credentials::new();
    credentials.add_token(token.service.clone(), token.clone());
    credentials
        .write_file(&args.file)
        .with_context(|| format!("writing {}", args.file.display()))?;
    println!(
        "Fetched token for {} into {}",
        token.service,
        args.file.display()
    );
    Ok(())
}
