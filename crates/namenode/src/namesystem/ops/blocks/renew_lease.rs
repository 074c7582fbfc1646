//! `renewLease`: a client's leases on its open files renewed.

use crate::namesystem::Namesystem;

impl Namesystem {
    pub fn renew_lease(&self, client: &str) {
        self.write().leases.renew(client);
    }
}
