//! The lease monitor: writers that stopped renewing their lease for the hard limit lose
//! it; their files are closed or their last block recovered (`block_recovery`).

use crate::error::Result;
use crate::namespace::InodeId;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// Releases the leases of writers that stopped renewing them for the hard limit
    /// (closing their files or starting block recovery), and moves recoveries on.
    pub async fn recover_expired_leases(&self) -> Result<()> {
        let expired: Vec<InodeId> = {
            let st = self.read();
            // As HDFS's lease monitor: nothing is recovered in safe mode.
            if st.safe_mode.is_on() {
                return Ok(());
            }
            st.leases
                .holders
                .values()
                .filter(|(renewed, _)| renewed.elapsed() > self.options.lease_hard_limit)
                .flat_map(|(_, files)| files.iter().copied())
                .collect()
        };
        for inode in expired {
            let txid = {
                let mut st = self.write();
                self.recover_file(&mut st, inode)?.1
            };
            self.sync(txid).await?;
        }
        let txid = self.advance_recoveries()?;
        self.sync(txid).await
    }
}
