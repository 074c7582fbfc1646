//! The class and message of a call the server refused.

use tusk_rpc::{HadoopException, RpcError};

/// The refused call's exception class (one Tusk knows) and message.
pub fn refusal<T: std::fmt::Debug>(result: Result<T, RpcError>) -> (HadoopException, String) {
    let err = result.expect_err("the call was refused");
    let remote = err
        .remote()
        .unwrap_or_else(|| panic!("not a remote exception: {err}"));
    (
        remote.exception().expect("a class Tusk knows"),
        remote.message.clone(),
    )
}
