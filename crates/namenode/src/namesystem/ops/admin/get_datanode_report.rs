//! `getDatanodeReport`: the DataNodes in a state.

use tusk_proto::hdfs as h;

use crate::datanodes::AdminState;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `getDatanodeReport` by `DatanodeReportTypeProto`: ALL, LIVE, DEAD,
    /// DECOMMISSIONING (live, in progress); Tusk has no maintenance states.
    pub fn datanode_report(&self, kind: i32) -> Vec<h::DatanodeInfoProto> {
        use h::DatanodeReportTypeProto as K;
        let st = self.read();
        let kind = K::try_from(kind).unwrap_or(K::All);
        (0..st.datanodes.nodes.len())
            .filter(|i| {
                let d = &st.datanodes.nodes[*i];
                match kind {
                    K::All => true,
                    K::Live => d.alive,
                    K::Dead => !d.alive,
                    K::Decommissioning => d.alive && d.admin == AdminState::DecommissionInProgress,
                    K::EnteringMaintenance | K::InMaintenance => false,
                }
            })
            .map(|i| st.datanodes.info_proto(i))
            .collect()
    }
}
