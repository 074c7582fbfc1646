//! `setSafeMode`: enter, leave or ask about safe mode.

use tusk_proto::hdfs as h;

use crate::error::{NameNodeError, Result};
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `setSafeMode`: ENTER, LEAVE and FORCE_EXIT need the superuser; every action
    /// answers whether safe mode is now on.
    pub fn set_safe_mode(&self, user: &str, action: h::SafeModeActionProto) -> Result<bool> {
        use h::SafeModeActionProto as A;
        if action != A::SafemodeGet && !self.permissions.is_superuser(user) {
            return Err(NameNodeError::SuperuserRequired {
                user: user.to_string(),
            });
        }
        let mut st = self.write();
        match action {
            A::SafemodeEnter => {
                if !st.safe_mode.manual {
                    st.safe_mode.manual = true;
                    tracing::info!(user, "STATE* Safe mode is ON. {}", st.safe_mode_tip());
                }
            }
            A::SafemodeLeave | A::SafemodeForceExit => {
                if st.safe_mode.is_on() {
                    tracing::info!(user, ?action, "leaving safe mode");
                }
                st.leave_safe_mode();
            }
            A::SafemodeGet => {}
        }
        Ok(st.safe_mode.is_on())
    }
}
