//! Remote uploads off the build's threads: threads that run queued jobs, started as the
//! queue needs them (one more whenever a job arrives and none is idle, up to as many as the
//! remote takes requests at once), drained by [`Uploads::finish`].
//!
//! Why: an upload's answer changes nothing the build does next (a refused or failed one is
//! a warning), so a build thread need not wait for it; with the remote 10 ms away, a
//! single-project cold build spent half its time waiting for its action records' PUTs.
//! Why on demand: a build that uploads one record must not pay for starting 64 threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::lock;

/// Jobs queued before a build thread waits for room: bounds the bytes held in memory.
const QUEUE: usize = 256;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
pub(super) struct Uploads {
    queue: Mutex<Queue>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// Threads waiting for a job.
    idle: Arc<AtomicUsize>,
}

#[derive(Default)]
enum Queue {
    /// Nothing queued yet: no thread runs.
    #[default]
    Unopened,
    Open(SyncSender<Job>, Arc<Mutex<Receiver<Job>>>),
    /// Finished: later jobs run on the caller's thread.
    Closed,
}

impl Uploads {
    /// Runs `job` on an upload thread, or right here once the queue is finished.
    pub(super) fn run(&self, job: impl FnOnce() + Send + 'static) {
        let mut queue = lock(&self.queue);
        if matches!(*queue, Queue::Unopened) {
            let (sender, receiver) = mpsc::sync_channel::<Job>(QUEUE);
            *queue = Queue::Open(sender, Arc::new(Mutex::new(receiver)));
        }
        let Queue::Open(sender, receiver) = &*queue else {
            drop(queue);
            return job();
        };
        let mut threads = lock(&self.threads);
        if self.idle.load(Ordering::SeqCst) == 0 && threads.len() < super::remote_concurrency() {
            let (receiver, idle) = (Arc::clone(receiver), Arc::clone(&self.idle));
            // Fewer threads than wanted still drain the queue; none leaves the job here.
            match std::thread::Builder::new().name("cache-upload".into()).spawn(move || work(&receiver, &idle)) {
                Ok(thread) => threads.push(thread),
                Err(_) if threads.is_empty() => {
                    drop((threads, queue));
                    return job();
                }
                Err(_) => {}
            }
        }
        drop(threads);
        // Sent outside the lock: a full queue makes only this caller wait.
        let sender = sender.clone();
        drop(queue);
        if let Err(mpsc::SendError(job)) = sender.send(Box::new(job)) {
            job();
        }
    }

    /// Waits for every queued job; later jobs run on their caller's thread.
    pub(super) fn finish(&self) {
        drop(std::mem::replace(&mut *lock(&self.queue), Queue::Closed));
        for thread in std::mem::take(&mut *lock(&self.threads)) {
            let _ = thread.join();
        }
    }
}

fn work(receiver: &Mutex<Receiver<Job>>, idle: &AtomicUsize) {
    loop {
        idle.fetch_add(1, Ordering::SeqCst);
        // The lock is held only to take the next job, not while it runs.
        let next = lock(receiver).recv();
        idle.fetch_sub(1, Ordering::SeqCst);
        let Ok(job) = next else { return };
        // A job that panicked (a bug) must not take the thread with it: the queue would
        // stop draining and its next sender would wait for ever.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_off_the_callers_thread_by_the_time_finish_returns_and_later_ones_inline() {
        let uploads = Uploads::default();
        let here = std::thread::current().id();
        let (done, inline) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        for _ in 0..1000 {
            let (done, inline) = (Arc::clone(&done), Arc::clone(&inline));
            uploads.run(move || {
                std::thread::sleep(std::time::Duration::from_micros(50));
                done.fetch_add(1, Ordering::SeqCst);
                if std::thread::current().id() == here {
                    inline.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
        uploads.finish();
        assert_eq!((done.load(Ordering::SeqCst), inline.load(Ordering::SeqCst)), (1000, 0));
        let ran_on = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&ran_on);
        uploads.run(move || *lock(&seen) = Some(std::thread::current().id()));
        assert_eq!(*lock(&ran_on), Some(here));
    }

    #[test]
    fn one_job_starts_one_thread() {
        let uploads = Uploads::default();
        let (sender, receiver) = mpsc::channel();
        uploads.run(move || sender.send(()).unwrap());
        receiver.recv().unwrap();
        assert_eq!(lock(&uploads.threads).len(), 1);
        uploads.finish();
    }
}
