//! The simulated hardware: every disk and every link direction is a [`Device`] with a
//! bandwidth, shared equally by the transfers ([`Flow`]s) on it in each step; a flow
//! moves at the rate of its slowest share. Each device keeps how long it was busy and
//! how many bytes it moved, which is what a NodeManager's status is measured from.

/// A disk, a link's send side or a link's receive side.
#[derive(Clone, Debug)]
pub struct Device {
    /// Bytes per second.
    pub bandwidth: f64,
    /// Flows on the device in the current step.
    flows: u32,
    /// Seconds during which at least one flow used it, since the start.
    pub busy_seconds: f64,
    /// Bytes moved through it since the start.
    pub bytes: f64,
}

impl Device {
    pub fn new(bandwidth: f64) -> Self {
        Device {
            bandwidth,
            flows: 0,
            busy_seconds: 0.0,
            bytes: 0.0,
        }
    }
}

/// Bytes to move through a set of devices (a read from one disk, over the sender's
/// and the receiver's links).
#[derive(Clone, Debug)]
pub struct Flow {
    pub devices: Vec<usize>,
    pub remaining: f64,
    /// The most the flow moves per second whatever its devices allow (one core's worth
    /// for a task's computing on shared cores).
    pub cap: f64,
}

impl Flow {
    pub fn new(devices: Vec<usize>, bytes: u64) -> Self {
        Flow {
            devices,
            remaining: bytes as f64,
            cap: f64::INFINITY,
        }
    }

    /// `units` of work through `devices`, at most `cap` a second.
    pub fn capped(devices: Vec<usize>, units: f64, cap: f64) -> Self {
        Flow {
            devices,
            remaining: units,
            cap,
        }
    }

    pub fn done(&self) -> bool {
        self.remaining <= 0.5
    }
}

/// All devices of the simulated cluster.
#[derive(Clone, Debug, Default)]
pub struct Hardware {
    pub devices: Vec<Device>,
}

impl Hardware {
    pub fn add(&mut self, bandwidth: f64) -> usize {
        self.devices.push(Device::new(bandwidth));
        self.devices.len() - 1
    }

    /// Moves every flow forward by `dt` seconds: each device's bandwidth is split
    /// equally among the flows on it, and a flow goes at its smallest share.
    pub fn advance(&mut self, flows: &mut [&mut Flow], dt: f64) {
        for d in &mut self.devices {
            d.flows = 0;
        }
        for f in flows.iter() {
            if !f.done() {
                for &d in &f.devices {
                    self.devices[d].flows += 1;
                }
            }
        }
        for d in &mut self.devices {
            if d.flows > 0 {
                d.busy_seconds += dt;
            }
        }
        for f in flows.iter_mut() {
            if f.done() {
                continue;
            }
            let rate = f
                .devices
                .iter()
                .map(|&d| self.devices[d].bandwidth / f64::from(self.devices[d].flows))
                .fold(f.cap, f64::min);
            let moved = (rate * dt).min(f.remaining);
            f.remaining -= moved;
            for &d in &f.devices {
                self.devices[d].bytes += moved;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_share_a_device_and_go_at_their_slowest_share() {
        let mut hw = Hardware::default();
        let disk = hw.add(100.0);
        let link = hw.add(50.0);
        let (mut a, mut b) = (
            Flow::new(vec![disk], 1000),
            Flow::new(vec![disk, link], 1000),
        );
        hw.advance(&mut [&mut a, &mut b], 1.0);
        let flows = [a, b];
        // The disk's 100 B/s split in two: 50 each; the link allows 50 too.
        assert_eq!(flows[0].remaining, 950.0);
        assert_eq!(flows[1].remaining, 950.0);
        assert_eq!(hw.devices[disk].bytes, 100.0);
        assert_eq!(hw.devices[disk].busy_seconds, 1.0);
        assert_eq!(hw.devices[link].bytes, 50.0);
    }

    #[test]
    fn a_capped_flow_goes_no_faster_than_its_cap() {
        // Two cores' worth shared by three tasks of one core each: 2/3 each; alone, one.
        let mut hw = Hardware::default();
        let cpu = hw.add(2.0);
        let mut tasks: Vec<Flow> = (0..3).map(|_| Flow::capped(vec![cpu], 10.0, 1.0)).collect();
        hw.advance(&mut tasks.iter_mut().collect::<Vec<_>>(), 1.0);
        assert!(tasks
            .iter()
            .all(|t| (t.remaining - (10.0 - 2.0 / 3.0)).abs() < 1e-9));
        let mut alone = Flow::capped(vec![cpu], 10.0, 1.0);
        hw.advance(&mut [&mut alone], 1.0);
        assert_eq!(alone.remaining, 9.0);
    }

    #[test]
    fn an_idle_device_is_not_busy_and_a_flow_stops_at_zero() {
        let mut hw = Hardware::default();
        let disk = hw.add(100.0);
        let idle = hw.add(100.0);
        let mut flow = Flow::new(vec![disk], 30);
        hw.advance(&mut [&mut flow], 1.0);
        assert!(flow.done());
        assert_eq!(hw.devices[disk].bytes, 30.0);
        assert_eq!(hw.devices[idle].busy_seconds, 0.0);
    }
}
