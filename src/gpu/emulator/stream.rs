//! Emulated streams and events. A stream is a queue of work that runs only when the host waits
//! for it (a stream or event synchronize, or a free, which synchronises the whole device), on
//! the waiting thread, in queue order: the latest a real device could run it, so a missing
//! wait shows every time.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use super::device::{current, require_current};
use super::registry;
use crate::groth16::Groth16Error;

/// One piece of queued work; an error poisons the device (a sticky error).
pub(super) type Work = Box<dyn FnOnce() -> Result<(), String> + Send>;

#[derive(Default)]
struct Queue {
    work: VecDeque<(u64, Work)>,
    /// Sequence number of the last work queued, and of the last that ran.
    queued: u64,
    ran: u64,
}

struct StreamState {
    device: u32,
    queue: Mutex<Queue>,
    /// Held while work runs, so two waiting threads run it once and in order.
    running: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StreamState {
    fn push(&self, work: Work) -> u64 {
        let mut q = lock(&self.queue);
        q.queued += 1;
        let seq = q.queued;
        q.work.push_back((seq, work));
        seq
    }

    /// Runs queued work up to and including number `upto`.
    fn run_until(&self, upto: u64) -> Result<(), Groth16Error> {
        let _running = lock(&self.running);
        loop {
            let next = {
                let mut q = lock(&self.queue);
                if q.ran >= upto {
                    break;
                }
                q.work.pop_front()
            };
            let Some((seq, work)) = next else { break };
            if registry::check_alive(self.device).is_ok() {
                if let Err(e) = work() {
                    registry::poison(self.device, e);
                }
            }
            lock(&self.queue).ran = seq;
        }
        registry::check_alive(self.device)
    }

    fn run_all(&self) -> Result<(), Groth16Error> {
        let upto = lock(&self.queue).queued;
        self.run_until(upto)
    }
}

/// Every stream created, to synchronise a device.
fn streams() -> MutexGuard<'static, Vec<Weak<StreamState>>> {
    static STREAMS: Mutex<Vec<Weak<StreamState>>> = Mutex::new(Vec::new());
    lock(&STREAMS)
}

/// Runs all queued work of `device` (`None`: of every device), as a device synchronise does.
pub(super) fn synchronize_device(device: Option<u32>) {
    let live: Vec<Arc<StreamState>> = {
        let mut all = streams();
        all.retain(|w| w.strong_count() > 0);
        all.iter().filter_map(Weak::upgrade).collect()
    };
    for s in live {
        if device.is_none_or(|d| d == s.device) {
            let _ = s.run_all();
        }
    }
}

/// An emulated stream of the context current at creation.
pub struct GpuStream {
    state: Arc<StreamState>,
}

impl GpuStream {
    /// Creates a stream in the current context.
    pub fn new() -> Result<Self, Groth16Error> {
        let device = current()?;
        let state = Arc::new(StreamState {
            device,
            queue: Mutex::new(Queue::default()),
            running: Mutex::new(()),
        });
        streams().push(Arc::downgrade(&state));
        Ok(Self { state })
    }

    /// The device the stream belongs to.
    pub(super) fn device(&self) -> u32 {
        self.state.device
    }

    /// Queues work; it runs when the host waits for it.
    pub(super) fn enqueue(&self, work: Work) -> Result<(), Groth16Error> {
        registry::check_alive(self.state.device)?;
        self.state.push(work);
        Ok(())
    }

    /// Runs everything queued on the stream (needs the stream's context current).
    pub fn synchronize(&self) -> Result<(), Groth16Error> {
        require_current(self.state.device)?;
        self.state.run_all()
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        // Queued work still completes after a stream is destroyed.
        let _ = self.state.run_all();
    }
}

#[derive(Default)]
struct EventState {
    /// The stream and queue position of the last record.
    recorded: Option<(Arc<StreamState>, u64)>,
    /// When the recorded position was reached.
    reached: Option<Instant>,
}

/// An emulated event: a position in a stream, with the time the stream reached it.
pub struct GpuEvent {
    state: Arc<Mutex<EventState>>,
}

impl GpuEvent {
    /// Creates an event in the current context.
    pub fn new() -> Result<Self, Groth16Error> {
        current()?;
        Ok(Self {
            state: Arc::new(Mutex::new(EventState::default())),
        })
    }

    /// Marks the current end of `stream`'s queue.
    pub fn record(&self, stream: &GpuStream) -> Result<(), Groth16Error> {
        require_current(stream.device())?;
        let state = Arc::clone(&self.state);
        // Held while queueing: a thread already running the stream cannot mark the event
        // reached before this record is in place.
        let mut e = lock(&self.state);
        let seq = stream.state.push(Box::new(move || {
            lock(&state).reached = Some(Instant::now());
            Ok(())
        }));
        e.recorded = Some((Arc::clone(&stream.state), seq));
        e.reached = None;
        Ok(())
    }

    /// Runs the work before the recorded mark (nothing when never recorded, as CUDA).
    pub fn synchronize(&self) -> Result<(), Groth16Error> {
        let recorded = lock(&self.state).recorded.clone();
        match recorded {
            Some((stream, seq)) => stream.run_until(seq),
            None => Ok(()),
        }
    }

    /// Milliseconds from `start` to this event; both must have been reached.
    pub fn ms_since(&self, start: &GpuEvent) -> Result<f32, Groth16Error> {
        let (Some(from), Some(to)) = (lock(&start.state).reached, lock(&self.state).reached) else {
            return Err(Groth16Error::Device(
                "event timing: an event has not completed (CUDA_ERROR_NOT_READY)".into(),
            ));
        };
        let ms = if to >= from {
            (to - from).as_secs_f32() * 1e3
        } else {
            -((from - to).as_secs_f32() * 1e3)
        };
        Ok(ms)
    }
}
