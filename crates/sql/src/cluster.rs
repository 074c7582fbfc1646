//! `tusk sql --cluster`: statements planned in the client and run by Apache Ballista on
//! Tusk's YARN. A SQL application's ApplicationMaster runs Ballista's scheduler
//! ([`am`]); its executors are YARN containers on the NodeManagers ([`executor`]), so SQL
//! work goes through the same ResourceManager, heartbeats and scheduling policies as
//! MapReduce; the client finds or starts the application ([`submit`]) and connects a
//! [`crate::SqlSession::remote`] to its scheduler.

pub mod am;
pub mod executor;
pub mod submit;
