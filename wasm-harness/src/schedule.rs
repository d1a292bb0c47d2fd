//! The scheduler: which cases an exploration draws ([`Source`], [`nth_case`]) and how its
//! worker threads share them ([`explore_shard`]: the next crash state of the oldest case
//! being checked, else the next case's run), with results summed in case order into a
//! [`Summary`]; [`explore`] (unsharded) and [`explore_cases`] (given cases) are its entry
//! points.

use crate::explore::{CaseResult, Explorer, Violation};
use crate::rng::Hasher64;
use crate::run::{Prepared, Verdict};
use crate::shard::Summary;
use crate::workload::{CaseId, Workload};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Which workloads an exploration draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Random,
    Ace,
    Regression,
    /// The families where resources run out (`full:K`).
    Full,
    /// ACE sequences of up to three operations before an fsync (`ace3:K`), all of them.
    Ace3,
    /// An evenly spread sample of the ACE3 cases (every `ACE3_SAMPLE_STRIDE`-th).
    Ace3Sample,
    All,
}

/// `Source::Ace3Sample` takes every this-many-th ACE3 case.
pub const ACE3_SAMPLE_STRIDE: u64 = 97;

/// The `i`-th case of a source (`None` when a finite source is exhausted).
pub fn nth_case(source: Source, i: u64) -> Option<CaseId> {
    let files = crate::workload::regression_files();
    match source {
        Source::Random => Some(CaseId::Random(i)),
        Source::Full => Some(CaseId::Full(i)),
        Source::Ace3 => (i < crate::workload::ace3_count()).then_some(CaseId::Ace3(i)),
        Source::Ace3Sample => {
            let k = i * ACE3_SAMPLE_STRIDE;
            (k < crate::workload::ace3_count()).then_some(CaseId::Ace3(k))
        }
        Source::Ace => (i < crate::workload::ace_count()).then_some(CaseId::Ace(i)),
        Source::Regression => files.get(i as usize).cloned().map(CaseId::File),
        Source::All => {
            // Regression files first, then ACE, random and full cases in turn.
            let f = files.len() as u64;
            if i < f {
                return Some(CaseId::File(files[i as usize].clone()));
            }
            let j = i - f;
            match j % 3 {
                0 if j / 3 < crate::workload::ace_count() => Some(CaseId::Ace(j / 3)),
                2 => Some(CaseId::Full(j / 3)),
                _ => Some(CaseId::Random(j / 3)),
            }
        }
    }
}

/// Cases [`explore_shard`] holds at once: being run, waiting for their checks or being
/// checked, not yet taken into the summary. Bounds memory (a prepared case holds its crash
/// images) while leaving the workers something to do when a case's last check is slow.
const CASES_IN_FLIGHT_MAX: usize = 6;

/// Explores cases from `source` until `cases` workloads ran or `duration` passed;
/// `on_violation` is told of each violation as it is found.
pub fn explore(
    ex: &Explorer,
    source: Source,
    cases: Option<u64>,
    duration: Option<std::time::Duration>,
    stop_at_first: bool,
    on_violation: &mut dyn FnMut(&Violation),
) -> Summary {
    explore_shard(ex, source, cases, duration, stop_at_first, crate::shard::Shard::ALL, on_violation)
}

/// A case of [`explore_shard`] between its start and its result.
enum Slot {
    /// Its workload is being run (single-threaded).
    Preparing,
    /// Its crash states are being checked: `next` is the first job not yet taken, `verdicts`
    /// holds those done (in job order), `done` counts them.
    Checking { prepared: Arc<Prepared>, next: usize, done: usize, verdicts: Vec<Option<Verdict>> },
}

/// One case in flight: its index in the source, its id, where it stands.
struct InFlight {
    index: u64,
    case: CaseId,
    slot: Slot,
}

/// What [`explore_shard`]'s workers share, under one lock.
struct Schedule {
    /// Cases started and not yet finished, by sequence number (the order they were taken
    /// from the source, which is the order their results are summed in).
    flight: std::collections::BTreeMap<u64, InFlight>,
    /// Sequence number of the next case to start.
    next_seq: u64,
    /// Index of the next case in the source.
    next_index: u64,
    /// No more cases start: the source or `cases` is exhausted, the time is up, or a
    /// violation stopped a search for the first one.
    exhausted: bool,
    /// Workers running a task (a run or a check) outside the lock.
    busy: usize,
    /// A search for the first violation found it: workers stop.
    stopped: bool,
}

/// Stops every worker of [`explore_shard`] when the worker holding it unwinds.
struct StopOnPanic<'a> {
    schedule: &'a Mutex<Schedule>,
    wake: &'a std::sync::Condvar,
}

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A panic under the lock poisons it; the schedule is only read to stop.
            let mut st = self.schedule.lock().unwrap_or_else(|p| p.into_inner());
            st.stopped = true;
            self.wake.notify_all();
        }
    }
}

/// What a worker reports for a case: its result, or that its workload could not be made.
enum Outcome {
    Checked(CaseResult),
    BadWorkload(Box<Violation>),
}

/// What a worker does next ([`Schedule::next_task`]).
enum Task {
    /// Check job `job` of case `seq`.
    Check { seq: u64, job: usize, prepared: Arc<Prepared> },
    /// Make case `seq`'s workload and run it.
    Prepare { seq: u64, case: CaseId },
    /// Nothing now: wait for another worker.
    Wait,
    /// Nothing left.
    Exit,
}

impl Schedule {
    /// The next task: a crash state of the oldest case being checked, else the run of a new
    /// case (when fewer than [`CASES_IN_FLIGHT_MAX`] are in flight), else wait (or exit when
    /// no worker is busy either). Crash states first, so that a case's results are ready
    /// early and the cases held stay few. After `duration`, cases not yet being checked are
    /// left (their results would not be summed after an unfinished earlier case anyway).
    fn next_task(&mut self, timed_out: bool, case_at: impl Fn(u64) -> Option<Option<CaseId>>) -> Task {
        if self.stopped {
            return Task::Exit;
        }
        if timed_out {
            self.exhausted = true;
        }
        for (&seq, f) in self.flight.iter_mut() {
            if let Slot::Checking { prepared, next, verdicts, .. } = &mut f.slot {
                if timed_out && *next == 0 {
                    continue;
                }
                if *next < verdicts.len() {
                    *next += 1;
                    return Task::Check { seq, job: *next - 1, prepared: prepared.clone() };
                }
            }
        }
        // Bounded: every turn moves `next_index`, and within a shard's stride an index of
        // this shard either has a case or ends the source.
        while !self.exhausted && self.flight.len() < CASES_IN_FLIGHT_MAX {
            let index = self.next_index;
            match case_at(index) {
                None => self.exhausted = true,
                Some(None) => self.next_index += 1,
                Some(Some(case)) => {
                    self.next_index += 1;
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    self.flight.insert(seq, InFlight { index, case: case.clone(), slot: Slot::Preparing });
                    return Task::Prepare { seq, case };
                }
            }
        }
        if self.busy == 0 {
            Task::Exit
        } else {
            Task::Wait
        }
    }
}

/// [`explore`] of one shard: the cases of `source` whose index is `shard.k` modulo
/// `shard.n`, among the first `cases` (all of them: with `cases`, the shards of one
/// exploration split exactly its cases).
///
/// `threads` workers share one schedule: each takes the next crash state to check of the
/// oldest case being checked, else runs the next case's workload (single-threaded), so no
/// core waits at the end of a case for its last state while there is other work (a per-case
/// barrier left ~7 % of two cores idle), and runs made ahead never compete with checks for
/// the cores. Results are summed in case order (the digest is that of checking the cases
/// one after another, whatever the number of threads).
pub fn explore_shard(
    ex: &Explorer,
    source: Source,
    cases: Option<u64>,
    duration: Option<std::time::Duration>,
    stop_at_first: bool,
    shard: crate::shard::Shard,
    on_violation: &mut dyn FnMut(&Violation),
) -> Summary {
    let start = Instant::now();
    let mut sum = Summary::default();
    let events0 = ex.events();
    let mut h = Hasher64::new();
    let timed_out = || duration.is_some_and(|d| start.elapsed() >= d);
    // The case at source index `i`: `None` past the source's or `cases`' end, `Some(None)`
    // at another shard's index.
    let case_at = &|i: u64| -> Option<Option<CaseId>> {
        if cases.is_some_and(|n| i >= n) {
            return None;
        }
        if !shard.has(i) {
            return Some(None);
        }
        nth_case(source, i).map(Some)
    };
    let schedule = Mutex::new(Schedule {
        flight: Default::default(),
        next_seq: 0,
        next_index: 0,
        exhausted: false,
        busy: 0,
        stopped: false,
    });
    let wake = std::sync::Condvar::new();
    let (tx, rx) = std::sync::mpsc::channel::<(u64, u64, Outcome)>();
    std::thread::scope(|scope| {
        for _ in 0..ex.opts.threads.max(1) {
            let tx = tx.clone();
            let (schedule, wake) = (&schedule, &wake);
            scope.spawn(move || {
                // A task that panics (a harness bug, a failed memo check) stops every worker,
                // so that the others' senders drop, the summing loop ends and the scope's
                // join re-raises the panic: otherwise the others would wait for the dead
                // worker's task forever.
                let _stop_on_panic = StopOnPanic { schedule, wake };
                let mut st = schedule.lock().unwrap();
                loop {
                    match st.next_task(timed_out(), case_at) {
                        Task::Exit => {
                            wake.notify_all();
                            return;
                        }
                        Task::Wait => st = wake.wait(st).unwrap(),
                        Task::Prepare { seq, case } => {
                            st.busy += 1;
                            drop(st);
                            let made = crate::workload::workload(&case, ex.opts.seed).map(|w| ex.prepare_workload(&w));
                            st = schedule.lock().unwrap();
                            st.busy -= 1;
                            match made {
                                Ok(prepared) => {
                                    let n = Explorer::job_count(&prepared);
                                    let f = st.flight.get_mut(&seq).expect("a case being run stays in flight");
                                    let verdicts = (0..n).map(|_| None).collect();
                                    f.slot =
                                        Slot::Checking { prepared: Arc::new(prepared), next: 0, done: 0, verdicts };
                                    if n == 0 {
                                        let f = st.flight.remove(&seq).expect("in flight");
                                        let Slot::Checking { prepared, .. } = f.slot else { unreachable!() };
                                        let r = ex.fold_case(&f.case, &prepared, vec![]);
                                        let _ = tx.send((seq, f.index, Outcome::Checked(r)));
                                    }
                                }
                                Err(e) => {
                                    // Reported in its turn, as a violation of no state.
                                    let f = st.flight.remove(&seq).expect("in flight");
                                    let _ = tx.send((
                                        seq,
                                        f.index,
                                        Outcome::BadWorkload(Box::new(workload_violation(&case, e))),
                                    ));
                                }
                            }
                            wake.notify_all();
                        }
                        Task::Check { seq, job, prepared } => {
                            st.busy += 1;
                            drop(st);
                            let v = ex.check_nth(&prepared, job);
                            drop(prepared);
                            st = schedule.lock().unwrap();
                            st.busy -= 1;
                            let finished = {
                                let f = st.flight.get_mut(&seq).expect("a case being checked stays in flight");
                                let Slot::Checking { verdicts, done, .. } = &mut f.slot else {
                                    unreachable!("a checked job's case is being checked")
                                };
                                verdicts[job] = Some(v);
                                *done += 1;
                                *done == verdicts.len()
                            };
                            if finished {
                                // Folded outside the lock; the case leaves the flight now.
                                let f = st.flight.remove(&seq).expect("in flight");
                                st.busy += 1;
                                drop(st);
                                let Slot::Checking { prepared, verdicts, .. } = f.slot else { unreachable!() };
                                let verdicts = verdicts.into_iter().map(|v| v.expect("every job checked")).collect();
                                let r = ex.fold_case(&f.case, &prepared, verdicts);
                                drop(prepared);
                                let _ = tx.send((seq, f.index, Outcome::Checked(r)));
                                st = schedule.lock().unwrap();
                                st.busy -= 1;
                            }
                            wake.notify_all();
                        }
                    }
                }
            });
        }
        drop(tx);
        // Results in case order: a case finished before an earlier one waits here. Cases
        // after one left unfinished when time ran out are not counted (their states are not
        // in the summary).
        let mut checked: std::collections::BTreeMap<u64, (u64, Outcome)> = Default::default();
        let mut next_taken = 0u64;
        'results: for (seq, index, outcome) in rx.iter() {
            checked.insert(seq, (index, outcome));
            while let Some((index, outcome)) = checked.remove(&next_taken) {
                next_taken += 1;
                match outcome {
                    Outcome::BadWorkload(v) => {
                        on_violation(&v);
                        sum.violations.push(*v);
                    }
                    Outcome::Checked(r) => {
                        sum.workloads += 1;
                        sum.states += r.states;
                        h.u64(r.digest);
                        sum.case_digests.push((index, r.digest));
                        for v in r.violations {
                            on_violation(&v);
                            sum.violations.push(v);
                        }
                    }
                }
                if stop_at_first && !sum.violations.is_empty() {
                    // The workers finish the task they hold and take no other.
                    schedule.lock().unwrap().stopped = true;
                    wake.notify_all();
                    break 'results;
                }
            }
        }
    });
    sum.digest = h.finish();
    sum.seconds = start.elapsed().as_secs_f64();
    sum.events = ex.events().since(&events0);
    sum
}

/// Explores the given cases (`rollfs-sim explore --case`).
pub fn explore_cases(ex: &Explorer, cases: &[CaseId], on_violation: &mut dyn FnMut(&Violation)) -> Summary {
    let start = Instant::now();
    let mut sum = Summary::default();
    let events0 = ex.events();
    let mut h = Hasher64::new();
    for case in cases {
        let w = match crate::workload::workload(case, ex.opts.seed) {
            Ok(w) => w,
            Err(e) => {
                let v = workload_violation(case, e);
                on_violation(&v);
                sum.violations.push(v);
                continue;
            }
        };
        let r = ex.explore_workload(case, &w);
        sum.workloads += 1;
        sum.states += r.states;
        h.u64(r.digest);
        for v in r.violations {
            on_violation(&v);
            sum.violations.push(v);
        }
    }
    sum.digest = h.finish();
    sum.seconds = start.elapsed().as_secs_f64();
    sum.events = ex.events().since(&events0);
    sum
}

/// The violation of a case whose workload cannot be built (e.g. a file that does not parse).
fn workload_violation(case: &CaseId, detail: String) -> Violation {
    Violation {
        case: case.clone(),
        workload: Workload {
            name: "?".into(),
            ops: vec![],
            dev_seed: 0,
            completion: crate::device::Completion::Immediate,
            discard_ignored: false,
            recovery_eio: None,
            device: None,
            no_enospc: false,
            max_points: None,
            earlier_life: false,
            nsrec: None,
            mixed: None,
        },
        state: None,
        kind: "workload".into(),
        detail,
    }
}
