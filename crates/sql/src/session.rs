//! [`SqlSession`]: a DataFusion session reading and writing the DFS, running statements
//! locally in the client. `CREATE TABLE name AS SELECT` writes Parquet under the
//! warehouse directory (`tusk.sql.warehouse.dir`, default `/user/<user>/warehouse`), at
//! `<warehouse>/<name>/`, and registers it as an external Parquet table.

use std::sync::Arc;

use ballista::prelude::SessionContextExt;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::dataframe::{DataFrame, DataFrameWriteOptions};
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::{CreateMemoryTable, DdlStatement, LogicalPlan};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use datafusion::sql::parser::DFParser;
use datafusion::sql::sqlparser::dialect::GenericDialect;
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::ObjectStore;
use tusk_client::ClientOptions;
use tusk_common::config::Configuration;
use url::Url;

use crate::error::{Result, SqlError};
use crate::registry::{runtime_env, DfsRegistry};

pub const WAREHOUSE_KEY: &str = "tusk.sql.warehouse.dir";

pub struct SqlSession {
    ctx: SessionContext,
    registry: Arc<DfsRegistry>,
    /// `hdfs://namenode/path/` of the warehouse directory.
    warehouse: String,
    /// `hdfs://namenode`: where a location without a scheme is (`fs.defaultFS`).
    default_fs: String,
}

impl SqlSession {
    /// A session with the client settings of `conf` (`fs.defaultFS` is the file system
    /// of `hdfs:///` URLs and of the warehouse).
    pub fn new(conf: &Configuration) -> Result<Self> {
        let (mut session, state) = Self::parts(conf)?;
        session.ctx = SessionContext::new_with_state(state).enable_url_table();
        Ok(session)
    }

    /// A session whose queries run on the Ballista scheduler at `scheduler`
    /// (`df://host:port`, see [`crate::cluster`]); statements are planned here, tables
    /// registered here, and the scheduler and its executors read `hdfs://` themselves.
    pub async fn remote(conf: &Configuration, scheduler: &str) -> Result<Self> {
        let (mut session, state) = Self::parts(conf)?;
        session.ctx = SessionContext::remote_with_state(scheduler, state)
            .await?
            .enable_url_table();
        // Ballista's adaptive planner loses a query when an executor holding a finished
        // stage's shuffle output dies (the job never ends: "Can't find active stage to
        // update stage outputs"); the static planner runs that stage again elsewhere.
        session
            .ctx
            .sql("SET ballista.planner.adaptive.enabled = false")
            .await?;
        // Ballista turns DataFusion's hash joins into sort-merge joins (they spill, a hash
        // join's build side must fit in memory); that sorted both sides of every
        // partitioned join and made TPC-H's join queries 3-6x slower at SF 1 (Q5 1.9 s
        // against 0.4 s). Hash joins, as in the local session; `SET
        // datafusion.optimizer.prefer_hash_join = false` brings sort-merge back.
        session
            .ctx
            .sql("SET datafusion.optimizer.prefer_hash_join = true")
            .await?;
        Ok(session)
    }

    /// The session (its context still to be made) and the state its context starts from.
    fn parts(conf: &Configuration) -> Result<(Self, SessionState)> {
        let options = ClientOptions::from_conf(conf)?;
        let default_fs = format!("hdfs://{}", options.namenode);
        let default_warehouse = format!("/user/{}/warehouse", options.user);
        let dir = conf.get_str(WAREHOUSE_KEY, &default_warehouse);
        let warehouse = if dir.contains("://") {
            dir
        } else {
            format!("{default_fs}/{}", dir.trim_start_matches('/'))
        };
        let warehouse = format!("{}/", warehouse.trim_end_matches('/'));
        let registry = Arc::new(DfsRegistry::new(options));
        let state = SessionStateBuilder::new()
            .with_config(SessionConfig::new().with_information_schema(true))
            .with_runtime_env(runtime_env(registry.clone(), None)?)
            .with_default_features()
            .build();
        let session = SqlSession {
            ctx: SessionContext::new(),
            registry,
            warehouse,
            default_fs,
        };
        Ok((session, state))
    }

    /// The DataFusion session, to register tables or run DataFrames directly.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// `hdfs://namenode/dir/` where `CREATE TABLE ... AS` writes.
    pub fn warehouse(&self) -> &str {
        &self.warehouse
    }

    /// Runs the `;`-separated statements of `sql` in order and returns the results of
    /// the last one.
    pub async fn run(&self, sql: &str) -> Result<Vec<RecordBatch>> {
        let mut last = None;
        for plan in self.plans(sql)? {
            last = Some(self.execute(plan).await?);
        }
        last.ok_or(SqlError::Empty)
    }

    /// The DataFrame of a single statement, without collecting it.
    pub async fn sql(&self, sql: &str) -> Result<DataFrame> {
        Ok(self.ctx.sql(sql).await?)
    }

    fn plans(&self, sql: &str) -> Result<Vec<datafusion::sql::parser::Statement>> {
        Ok(DFParser::parse_sql_with_dialect(sql, &GenericDialect {})?
            .into_iter()
            .collect())
    }

    async fn execute(
        &self,
        mut statement: datafusion::sql::parser::Statement,
    ) -> Result<Vec<RecordBatch>> {
        use datafusion::sql::parser::Statement;
        match &mut statement {
            Statement::CreateExternalTable(create) => create
                .locations
                .iter_mut()
                .for_each(|l| self.on_default_fs(l)),
            Statement::CopyTo(copy) => self.on_default_fs(&mut copy.target),
            _ => {}
        }
        let state = self.ctx.state();
        let plan = state.statement_to_plan(statement).await?;
        if let LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(create)) = plan {
            return self.create_table_as(create).await;
        }
        Ok(self.ctx.execute_logical_plan(plan).await?.collect().await?)
    }

    /// A location without a scheme (`/data/t/`) is on the cluster's default file system,
    /// as a Hadoop path is.
    fn on_default_fs(&self, location: &mut String) {
        if location.starts_with('/') {
            *location = format!("{}{location}", self.default_fs);
        }
    }

    /// `CREATE TABLE name AS query`: Parquet under `<warehouse>/<name>/`, registered as an
    /// external table.
    async fn create_table_as(&self, create: CreateMemoryTable) -> Result<Vec<RecordBatch>> {
        let table = create.name.table().to_string();
        if self.ctx.table_exist(create.name.clone())? && !create.or_replace {
            if create.if_not_exists {
                return Ok(Vec::new());
            }
            return Err(datafusion::error::DataFusionError::Plan(format!(
                "Table '{}' already exists",
                create.name
            ))
            .into());
        }
        let location = format!("{}{table}/", self.warehouse);
        let url = Url::parse(&location)
            .map_err(|e| datafusion::error::DataFusionError::Plan(format!("{location}: {e}")))?;
        let store = self.registry.dfs_store(&url)?;
        let prefix = Path::from(url.path().trim_matches('/'));
        let existing: Vec<_> = store
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(|e| datafusion::error::DataFusionError::ObjectStore(Box::new(e)))?;
        if !existing.is_empty() {
            if !create.or_replace {
                return Err(SqlError::TableExists { table, location });
            }
            store
                .client()
                .delete(&format!("/{prefix}"), true)
                .await
                .map_err(SqlError::Config)?;
        }
        let df = DataFrame::new(self.ctx.state(), (*create.input).clone());
        df.write_parquet(&location, DataFrameWriteOptions::new(), None)
            .await?;
        self.ctx.deregister_table(create.name.clone())?;
        self.ctx
            .register_parquet(create.name, &location, ParquetReadOptions::default())
            .await?;
        Ok(Vec::new())
    }
}
