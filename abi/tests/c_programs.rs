//! The C programs of tests/abi/, built with `ibdyn-cc` and run under `ibdyn run -n 4` (the
//! `ibdyn` binary of the workspace's root package: `cargo build --workspace` first). Each
//! program checks its results itself and exits non-zero on a failed check.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/abi")
}

/// target/<profile>, where cargo put this test, ibdyn-cc, libmpi_abi.so and ibdyn.
fn profile_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ibdyn-cc"))
        .parent()
        .expect("target/<profile>")
        .to_path_buf()
}

/// The library this test run built: cargo refreshes target/<profile>/deps/libmpi_abi.so for
/// `cargo test`, the copy next to ibdyn-cc only for `cargo build`.
fn lib_dir() -> PathBuf {
    let deps = profile_dir().join("deps");
    if deps.join("libmpi_abi.so").is_file() {
        deps
    } else {
        profile_dir()
    }
}

fn ibdyn_bin() -> PathBuf {
    let p = profile_dir().join("ibdyn");
    assert!(
        p.is_file(),
        "the ibdyn binary is not built at {}: run `cargo build --workspace` (or `cargo build --bin ibdyn`) first",
        p.display()
    );
    p
}

/// A private directory for one test's binaries and jobs; removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("ibdyn-abi-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(d.join("tmp")).expect("scratch");
        Scratch(d)
    }

    /// Compiles tests/abi/NAME.c with ibdyn-cc.
    fn build(&self, name: &str) -> PathBuf {
        let exe = self.0.join(name);
        let out = Command::new(env!("CARGO_BIN_EXE_ibdyn-cc"))
            .env("IBDYN_ABI_LIBDIR", lib_dir())
            .args(["-Wall", "-Werror", "-Wno-unused-variable", "-o"])
            .arg(&exe)
            .arg(sources().join(format!("{name}.c")))
            .output()
            .expect("run ibdyn-cc");
        assert!(
            out.status.success(),
            "ibdyn-cc {name}.c failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        exe
    }

    /// `ibdyn run -n N EXE` under a bound, with the job's session files in this scratch dir.
    fn run(&self, n: u32, exe: &Path) -> Output {
        self.run_args(n, exe, &[])
    }

    fn run_args(&self, n: u32, exe: &Path, args: &[&str]) -> Output {
        let mut words = vec![OsString::from("-n"), n.to_string().into(), exe.into()];
        words.extend(args.iter().map(OsString::from));
        self.run_words(&words)
    }

    /// `ibdyn run WORDS` (options, then the applications).
    fn run_words(&self, words: &[OsString]) -> Output {
        let out = Command::new("timeout")
            .args(["--signal=TERM", "--kill-after=10", "180"])
            .arg(ibdyn_bin())
            .arg("run")
            .args(words)
            .env("TMPDIR", self.0.join("tmp"))
            // cargo's LD_LIBRARY_PATH holds target/<profile>, whose libmpi_abi.so is refreshed
            // by `cargo build` only; the programs' rpath names the library this run built.
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("IBDYN_LOG")
            .output()
            .expect("run ibdyn");
        let left: Vec<_> = std::fs::read_dir(self.0.join("tmp"))
            .expect("read tmp")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "the job left behind: {left:?}");
        out
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_ok(name: &str, n: u32, expect: &str) {
    let s = Scratch::new(name);
    let exe = s.build(name);
    assert_ran(name, &s.run(n, &exe), expect);
}

/// The job succeeded and its output holds `expect`.
fn assert_ran(name: &str, out: &Output, expect: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{name} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains(expect),
        "{name}: expected {expect:?} in the output:\n{stdout}\nstderr:\n{stderr}"
    );
}

#[test]
fn hello_reports_rank_and_size() {
    let s = Scratch::new("hello");
    let exe = s.build("hello");
    let out = s.run(4, &exe);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for r in 0..4 {
        assert!(
            stdout.contains(&format!("hello from rank {r} of 4")),
            "{stdout}"
        );
    }
}

#[test]
fn point_to_point_ring() {
    run_ok("ring", 4, "ring: ok on 4 ranks");
}

#[test]
fn collectives() {
    run_ok("allreduce", 4, "allreduce: ok on 4 ranks");
}

#[test]
fn spawn_merge_disconnect() {
    let s = Scratch::new("spawn_merge");
    let exe = s.build("spawn_merge");
    let out = s.run(2, &exe);
    assert_ran(
        "spawn_merge",
        &out,
        "spawn_merge: ok, 2 parents, 2 children",
    );
    // A spawned job's failure does not fail `ibdyn run`: each child says it passed.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let gone = stdout.matches("has no parent after its disconnect").count();
    assert_eq!(gone, 2, "{stdout}");
}

#[test]
fn errors_return_their_classes() {
    run_ok("errors", 4, "errors: ok");
}

#[test]
fn errors_are_fatal_by_default() {
    let s = Scratch::new("fatal");
    let exe = s.build("fatal");
    for (args, handler) in [
        (&[][..], "MPI_ERRORS_ARE_FATAL"),
        (&["abort"][..], "MPI_ERRORS_ABORT"),
    ] {
        let out = s.run_args(2, &exe, args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "the job succeeded:\n{stdout}");
        assert!(!stdout.contains("not reached"), "{stdout}");
        assert!(
            stderr.contains("MPI_Send") && stderr.contains("MPI_ERR_RANK"),
            "the message names neither the function nor the class:\n{stderr}"
        );
        assert!(
            stderr.contains(&format!("the error handler is {handler}")),
            "the message does not name {handler}:\n{stderr}"
        );
    }
    let out = s.run_args(2, &exe, &["call"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains("MPI_Abort called on communicator MPI_COMM_WORLD"),
        "the message does not name the communicator:\n{stderr}"
    );
}

#[test]
fn library_has_the_standard_soname_and_both_symbol_sets() {
    let lib = lib_dir().join("libmpi_abi.so");
    let out = Command::new("readelf").arg("-dW").arg(&lib).output();
    let Ok(out) = out else {
        eprintln!("*** SKIPPED the SONAME check: readelf not found ***");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[libmpi_abi.so.1]"), "SONAME:\n{text}");
    let syms = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output();
    if let Ok(syms) = syms {
        let syms = String::from_utf8_lossy(&syms.stdout);
        for f in [
            "MPI_Init",
            "PMPI_Init",
            "MPI_Comm_spawn",
            "PMPI_Allreduce",
            "MPI_Wtime",
        ] {
            assert!(
                syms.lines().any(|l| l.ends_with(&format!(" {f}"))),
                "{f} is not exported"
            );
        }
    }
}

/// `ibdyn cc` (the command a newcomer uses) builds the same way as `ibdyn-cc`, and `ibdyn info`
/// says where the library is.
#[test]
fn ibdyn_cc_and_info_name_the_library() {
    let s = Scratch::new("ibdyn-cc");
    let exe = s.0.join("hello");
    let out = Command::new(ibdyn_bin())
        .env("IBDYN_ABI_LIBDIR", lib_dir())
        .args(["cc", "-o"])
        .arg(&exe)
        .arg(sources().join("hello.c"))
        .output()
        .expect("run ibdyn cc");
    assert!(
        out.status.success() && exe.is_file(),
        "ibdyn cc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = s.run(2, &exe);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("hello from rank 1 of 2"),
        "{out:?}"
    );
    let info = Command::new(ibdyn_bin())
        .arg("info")
        .output()
        .expect("ibdyn info");
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("MPI ABI library: /"), "{info}");
}

#[test]
fn point_to_point_modes_probes_and_requests() {
    run_ok("p2p_modes", 3, "p2p_modes: ok on 3 ranks");
}

/// The value-index pair types: the size of their data, the extent of their C struct;
/// received as a struct of the same type map and the other way round, reduced with
/// MINLOC/MAXLOC and a user operation, packed.
#[test]
fn pair_types_match_structs_of_their_type_map() {
    run_ok_on_1_and_2_nodes("pair_types", 2, "pair_types: ok");
}

/// Gather, Scatter and their v, non-blocking and persistent forms, on intra- and
/// intercommunicators, and Alltoallw, with NULL, 0 and MPI_DATATYPE_NULL where MPI says the
/// arguments are not significant.
#[test]
fn arguments_a_collective_ignores_may_be_null() {
    run_ok_on_1_and_2_nodes("coll_ignored", 4, "coll_ignored: ok");
}

/// MPI_Cancel of sends: withdrawn when unmatched (a wait on it returns although nobody
/// receives), left to complete when matched; between nodes too, where the race of a cancel
/// and a receive has both outcomes.
#[test]
fn cancelled_sends_are_withdrawn_or_received_whole() {
    run_ok_on_1_and_2_nodes("cancel_send", 2, "cancel_send: ok");
}

#[test]
fn derived_datatypes() {
    run_ok("datatypes", 3, "datatypes: ok on 3 ranks");
}

#[test]
fn every_intracommunicator_collective() {
    run_ok("coll_all", 4, "coll_all: ok on 4 ranks");
}

#[test]
fn communicators_groups_attributes_info() {
    run_ok("comm_mgmt", 3, "comm_mgmt: ok on 3 ranks");
}

#[test]
fn intercommunicators_create_connect_accept_and_collectives() {
    run_ok("intercomm", 4, "intercomm: ok on 4 ranks");
}

#[test]
fn spawn_multiple_with_info_appnum_and_errcodes() {
    run_ok(
        "spawn_multiple",
        2,
        "spawn_multiple: ok, 2 parents, 3 children",
    );
}

/// Two applications in one job (`ibdyn run -n 1 mpmd ... : -n 3 mpmd ...`) on two nodes.
#[test]
fn mpmd_applications_share_one_world_with_their_appnum() {
    let s = Scratch::new("mpmd");
    let exe = s.build("mpmd");
    let w = |x: &str| OsString::from(x);
    let words = [
        w("--nodes"),
        w("2"),
        w("-n"),
        w("1"),
        exe.clone().into(),
        w("0"),
        w("1"),
        w("3"),
        w(":"),
        w("-n"),
        w("3"),
        exe.into(),
        w("1"),
        w("1"),
        w("3"),
    ];
    let out = s.run_words(&words);
    assert_ran("mpmd", &out, "mpmd: ok, 1 + 3 ranks");
}

#[test]
fn a_failed_spawn_reports_err_spawn_per_child() {
    run_ok("spawn_fail", 2, "spawn_fail: ok on 2 ranks");
}

#[test]
fn calls_before_init_and_after_finalize_are_fatal_errors() {
    let s = Scratch::new("outside");
    let exe = s.build("outside");
    for (when, cause) in [
        ("before", "before MPI_Init"),
        ("after", "after MPI_Finalize"),
    ] {
        let out = s.run_args(1, &exe, &[when]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && !stdout.contains("not reached"),
            "{when}: {stdout}"
        );
        assert!(
            stderr.contains(cause),
            "{when}: the message does not say {cause:?}:\n{stderr}"
        );
    }
}

/// Also on 2 nodes, where rank 0's MPI_Send of the port is its first message to rank 1 and
/// it then blocks in `accept`: the send returns only once the message has left.
#[test]
fn comm_join_over_a_socket() {
    run_ok_on_1_and_2_nodes("join", 2, "join: ok");
}

/// `run_ok`, then the same on 2 nodes.
fn run_ok_on_1_and_2_nodes(name: &str, n: u32, expect: &str) {
    let s = Scratch::new(name);
    let exe = s.build(name);
    assert_ran(name, &s.run(n, &exe), expect);
    let w = |x: &str| OsString::from(x);
    let n = n.to_string();
    let out = s.run_words(&[w("--nodes"), w("2"), w("-n"), w(&n), exe.into()]);
    assert_ran(&format!("{name} on 2 nodes"), &out, expect);
}

#[test]
fn get_elements_counts_basic_elements_of_mixed_and_nested_types() {
    run_ok("elements", 1, "elements: ok");
}

/// A message over 2 GiB: within a node (shared memory) and between nodes, where the fabric
/// splits the RDMA read (a `sock` frame holds 1 GiB at most).
#[test]
fn a_message_over_2_gib_within_a_node_and_between_nodes() {
    run_ok_on_1_and_2_nodes("huge_message", 2, "huge_message: ok");
}

/// A shared window past the room left in /dev/shm fails with MPI_ERR_NO_MEM on every process
/// instead of a SIGBUS at the first store.
#[test]
fn a_window_larger_than_dev_shm_is_refused_with_no_mem() {
    run_ok_on_1_and_2_nodes("win_no_room", 3, "win_no_room: ok");
}

/// A truncated receive still reports its sender, tag and what is in the buffer (Recv,
/// Wait on a wildcard Irecv, Waitall, a rendezvous message), on one node and on two.
#[test]
fn a_truncated_receive_fills_its_status() {
    run_ok_on_1_and_2_nodes("truncate_status", 2, "truncate_status: ok");
}

/// A spawn its root refuses reading the arguments fails on every rank with the root's reason.
#[test]
fn a_spawn_the_root_refuses_fails_everywhere_with_its_reason() {
    run_ok_on_1_and_2_nodes("spawn_refused", 2, "spawn_refused: ok");
}

/// On 2 nodes, each command of a spawn_multiple goes to the host its info names; a host that
/// is not one of the job's is refused by name on every rank.
#[test]
fn spawn_multiple_places_each_command_on_its_own_host() {
    let s = Scratch::new("spawn_hosts");
    let exe = s.build("spawn_hosts");
    let w = |x: &str| OsString::from(x);
    let out = s.run_words(&[w("--nodes"), w("2"), w("-n"), w("2"), exe.into()]);
    assert_ran("spawn_hosts", &out, "spawn_hosts: ok");
}

/// A connect to a name that is not a port fails with MPI_ERR_PORT on every rank.
#[test]
fn a_connect_to_a_malformed_port_name_fails_with_err_port() {
    run_ok("bad_port", 3, "bad_port: ok");
}

/// External32 packs derived types element by element and `long double` as binary128.
#[test]
fn pack_external_takes_derived_types_and_long_double() {
    run_ok("pack_external_derived", 1, "pack_external_derived: ok");
}

/// A connect to a closed port fails with MPI_ERR_PORT at once (the connect bound is set to
/// 600 s: a connect left waiting fails the test by its bound), on one node and on two.
#[test]
fn a_connect_to_a_closed_port_fails_at_once_with_err_port() {
    let s = Scratch::new("closed_port");
    let exe = s.build("closed_port");
    let w = |x: &str| OsString::from(x);
    for nodes in ["1", "2"] {
        let out = s.run_words(&[
            w("--nodes"),
            w(nodes),
            w("-x"),
            w("IBDYN_CONNECT_TIMEOUT=600"),
            w("-n"),
            w("2"),
            exe.clone().into(),
        ]);
        assert_ran("closed_port", &out, "closed_port: ok");
    }
}

/// Non-blocking collectives completed in different orders on different ranks: a wait on one
/// moves the others on, on one node and on two.
#[test]
fn nonblocking_collectives_complete_in_any_order() {
    run_ok_on_1_and_2_nodes("nbc_order", 3, "nbc_order: ok");
}

/// A process blocked in a receive (MPI_Recv, Wait, Probe, Sendrecv, Waitany, Waitsome) or
/// in a blocking collective moves its non-blocking collectives on, which its peers wait in
/// before they send what it waits for or join the collective; on one node and on two.
#[test]
fn blocking_calls_move_nonblocking_collectives_on() {
    run_ok_on_1_and_2_nodes("nbc_progress", 4, "nbc_progress: ok on 4 ranks");
}

/// MPI's non-overtaking rule between two processes of one node, with the race forced (every
/// message waits in the queue before the first receive looks): a later small message never
/// overtakes a large or synchronous one sent before it.
#[test]
fn messages_of_one_sender_on_the_node_arrive_in_order() {
    run_ok("overtake", 2, "overtake: ok");
}

/// MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on MPI_LONG_DOUBLE in long double precision; on
/// one node and on two.
#[test]
fn reductions_on_long_double_keep_its_precision() {
    run_ok_on_1_and_2_nodes("long_double_ops", 3, "long_double_ops: ok on 3 ranks");
}

/// A wait for a collective while another is in flight fails when a process of the
/// communicator has died, on one node and on two, instead of waiting for ever.
#[test]
fn a_wait_among_collectives_in_flight_fails_on_a_dead_peer() {
    let lines: Vec<String> = (0..2)
        .map(|r| format!("nbc_dead: rank {r} wait failed: 1"))
        .collect();
    keep_going_on_1_and_2_nodes("nbc_dead", 3, &lines);
}

/// `name` on `n` ranks with `--keep-going` (a rank of it dies), on one node and on two:
/// its output holds every line of `expect`.
fn keep_going_on_1_and_2_nodes(name: &str, n: u32, expect: &[String]) {
    let s = Scratch::new(name);
    let exe = s.build(name);
    let w = |x: &str| OsString::from(x);
    for nodes in ["1", "2"] {
        let out = s.run_words(&[
            w("--keep-going"),
            w("--nodes"),
            w(nodes),
            w("-n"),
            w(&n.to_string()),
            exe.clone().into(),
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        for line in expect {
            assert!(
                stdout.contains(line.as_str()),
                "{nodes} node(s): {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Two threads waiting at MPI_THREAD_MULTIPLE for a late peer (in MPI_Recv, then in a
/// blocking MPI_Allreduce) back off: the process uses well under a core while they wait.
#[test]
fn waiting_threads_back_off_at_mpi_thread_multiple() {
    run_ok("threads_idle", 2, "threads_idle: ok");
}

/// Two threads waiting in MPI_Recv for a process that has ended both get
/// MPI_ERR_PROC_ABORTED back under MPI_ERRORS_RETURN; on one node and on two.
#[test]
fn threads_waiting_for_a_dead_process_get_its_error_back() {
    let line = "threads_dead: both waits failed: 1".to_string();
    keep_going_on_1_and_2_nodes("threads_dead", 2, &[line]);
}

/// A first message to a process of this node that has ended fails with
/// MPI_ERR_PROC_ABORTED, not with a missing shared-memory file.
#[test]
fn a_first_send_to_an_ended_process_of_the_node_names_it_dead() {
    let s = Scratch::new("send_to_ended");
    let exe = s.build("send_to_ended");
    let w = |x: &str| OsString::from(x);
    let out = s.run_words(&[w("--keep-going"), w("-n"), w("3"), exe.into()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("send_to_ended: proc aborted"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sessions_without_mpi_init() {
    run_ok("sessions", 3, "sessions: ok on 3 ranks");
}

#[test]
fn matched_probe_takes_the_message_out_of_matching() {
    run_ok("mprobe_order", 2, "mprobe_order: ok");
}

#[test]
fn user_error_handlers_get_the_object_and_the_code() {
    let s = Scratch::new("errhandler_user");
    let exe = s.build("errhandler_user");
    // "raised": also the errors ibdyn finds itself (MPICH's wheel checks no arguments).
    let out = s.run_args(2, &exe, &["raised"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("errhandler_user: ok"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_job_grows_by_one_through_the_mpix_pset_calls() {
    run_ok("session_grow", 1, "session_grow: ok, 1 + 1 processes");
}

#[test]
fn intercomm_alltoallw_reduce_scatter_c_and_large_type_constructors() {
    run_ok("large_inter", 4, "large_inter: ok");
}

#[test]
fn memory_dims_split_types_hints_isendrecv_and_persistent_bsend() {
    run_ok("mpi4py_batch", 3, "mpi4py_batch: ok on 3 ranks");
}

#[test]
fn cartesian_topologies_shifts_sub_grids_and_errors() {
    run_ok("cart", 5, "cart: ok");
}

#[test]
fn dims_create_makes_dimensions_as_close_as_possible() {
    run_ok("dims", 1, "dims: ok");
}

#[test]
fn persistent_collectives_restart_with_the_current_buffers() {
    run_ok("persistent_coll", 3, "persistent_coll: ok");
}

#[test]
fn datatype_attributes_copy_and_delete_functions() {
    run_ok("type_attr", 1, "type_attr: ok");
}

#[test]
fn pack_and_unpack_build_and_read_one_message_of_several_parts() {
    run_ok("pack", 2, "pack: ok on 2 ranks");
}

#[test]
fn generalized_requests_complete_from_the_program_and_its_threads() {
    run_ok("grequest", 2, "grequest: ok on 2 ranks");
}

/// Threads take turns making, using and freeing communicators, types and requests each
/// other made; a thread completes a generalized request while the main thread waits for it.
#[test]
fn threads_take_turns_calling_mpi() {
    run_ok(
        "threads",
        3,
        "threads: ok on 3 ranks, 30 rounds in 3 threads",
    );
}

/// MPI_THREAD_MULTIPLE: a blocking receive waits for what another thread of its process
/// sends afterwards, two threads exchange messages on two communicators in opposite orders
/// on the two ranks of each pair, and two threads run blocking collectives on two
/// communicators in opposite orders on even and odd ranks (the second thread starts once the
/// first sleeps inside MPI, so a call that kept the others out would hang); on one node and
/// on two.
#[test]
fn blocking_calls_of_one_thread_let_the_others_in_at_mpi_thread_multiple() {
    let s = Scratch::new("threads-multiple");
    threads_on_1_and_2_nodes(&s, &["multiple"], "threads: multiple ok on 4 ranks");
}

/// `threads ARGS` on 4 ranks, on one node and on two.
fn threads_on_1_and_2_nodes(s: &Scratch, args: &[&str], expect: &str) {
    let exe = s.build("threads");
    assert_ran("threads", &s.run_args(4, &exe, args), expect);
    let mut words: Vec<OsString> = ["--nodes", "2", "-n", "4"].map(OsString::from).into();
    words.push(exe.into());
    words.extend(args.iter().map(OsString::from));
    assert_ran("threads on 2 nodes", &s.run_words(&words), expect);
}

/// MPI_THREAD_MULTIPLE: two threads make objects collectively on two communicators of every
/// rank (split, split_type, create_group, create_from_group, Cartesian and graph topologies,
/// an intercommunicator and its merge, windows, a file with collective I/O), in opposite
/// orders on even and odd ranks, the second once the first sleeps inside MPI; then a server
/// thread waits in MPI_Comm_accept while its main thread exchanges with the clients, which
/// connect only afterwards, and a thread waits in a spawn (or a join) whose other side starts
/// only after such an exchange. A call that kept the other threads out while it waited hangs
/// here every time; on one node and on two.
#[test]
fn threads_make_objects_at_once_in_any_order_at_mpi_thread_multiple() {
    let s = Scratch::new("threads-making");
    let dir = s.0.join("tmp").to_string_lossy().into_owned();
    threads_on_1_and_2_nodes(&s, &["making", &dir], "threads: making ok on 4 ranks");
}

/// At MPI_THREAD_FUNNELED a call from another thread ends the job with what to ask for.
#[test]
fn a_call_from_another_thread_at_funneled_is_refused_by_name() {
    let s = Scratch::new("threads-funneled");
    let exe = s.build("threads");
    let out = s.run_args(1, &exe, &["funneled"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the job succeeded:\n{stderr}");
    assert!(!stderr.contains("went through"), "{stderr}");
    assert!(
        stderr.contains("MPI_Comm_rank") && stderr.contains("MPI_THREAD_SERIALIZED"),
        "the message names neither the call nor the level to ask for:\n{stderr}"
    );
}

#[test]
fn partitioned_sends_leave_when_their_partitions_are_ready() {
    run_ok("partitioned", 2, "partitioned: ok on 2 ranks");
}

/// Non-blocking collectives on a spawn's intercommunicator leave at once: the parent starts
/// each, then sends what child 0 needs before it starts its own (a collective that ran to
/// completion at the call hangs here, until the run's time bound).
#[test]
fn intercommunicator_collectives_do_not_block_at_the_call() {
    run_ok(
        "inter_nonblocking",
        1,
        "inter_nonblocking: ok with 2 children",
    );
}

/// MPICH's `_x` operation and error handlers (extra state, destructors once freed) and the
/// Fortran details a binding tells MPI.
#[test]
fn extension_callbacks_carry_their_state_and_are_destroyed_once() {
    run_ok("extensions_x", 2, "extensions_x: ok on 2 ranks");
}

#[test]
fn one_sided_communication_among_the_processes_of_a_node() {
    let shm_before = window_segments();
    run_ok("rma", 3, "rma: ok on 3 ranks");
    // Each accumulate's read-modify-write widened to 300 us: unserialized ones would lose
    // updates of the shared counter.
    let s = Scratch::new("rma-race");
    let exe = s.build("rma");
    let w = |x: &str| OsString::from(x);
    let out = s.run_words(&[
        w("-x"),
        w("IBDYN_RMA_TEST_DELAY_US=300"),
        w("-n"),
        w("4"),
        exe.into(),
    ]);
    assert_ran("rma", &out, "rma: ok on 4 ranks");
    assert_eq!(
        window_segments(),
        shm_before,
        "a window's segment stayed in /dev/shm"
    );
}

/// On 2 nodes: passive-target epochs (MPI_Win_lock, lock_all, flush) on ranks of the other
/// node while those ranks are busy in other MPI calls; exclusive locks from both nodes
/// exclude each other (no increment of a shared counter lost), fetch-and-op tickets are
/// distinct, and a far error comes back at the unlock.
#[test]
fn passive_target_epochs_reach_ranks_of_the_other_node() {
    let s = Scratch::new("rma_passive_nodes");
    let exe = s.build("rma_passive_nodes");
    let w = |x: &str| OsString::from(x);
    let shm_before = window_segments();
    for n in ["2", "5"] {
        let out = s.run_words(&[w("--nodes"), w("2"), w("-n"), w(n), exe.clone().into()]);
        assert_ran(
            "rma_passive_nodes",
            &out,
            &format!("rma_passive_nodes: ok on {n} ranks"),
        );
    }
    assert_eq!(
        window_segments(),
        shm_before,
        "a window's segment stayed in /dev/shm"
    );
}

/// With `--keep-going`: an origin dies holding a lock on rank 0 (exclusive, shared, or
/// MPI_Win_lock_all's), and rank 0's own exclusive lock is granted once the death is known
/// instead of failing at the lock's bound (120 s, past which this job's run would fail the
/// check). On 2 nodes the target service releases the dead origin's lock; on 1 node the
/// waiter finds the holder the lock line names or marks ended.
#[test]
fn an_origin_that_dies_holding_a_lock_gives_it_back() {
    let s = Scratch::new("rma_dead_origin");
    let exe = s.build("rma_dead_origin");
    let w = |x: &str| OsString::from(x);
    for (nodes, kind) in ["1", "2"]
        .into_iter()
        .flat_map(|n| ["exclusive", "shared", "all"].map(|k| (n, k)))
    {
        let out = s.run_words(&[
            w("--keep-going"),
            w("--nodes"),
            w(nodes),
            w("-n"),
            w("2"),
            exe.clone().into(),
            w(kind),
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stdout.contains("rma_dead_origin: ok, the dead origin's lock came back"),
            "{nodes} node(s), {kind}: stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(
            stderr.contains("rank 1 exited with code 3"),
            "{nodes} node(s), {kind}: stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert_eq!(out.status.code(), Some(3), "stderr:\n{stderr}");
    }
}

/// On 2 nodes: windows spanning them (allocated, created, dynamic) move data to and from the
/// other node in fence and post/start/complete/wait epochs, accumulates stay atomic with
/// this node's direct ones, an epoch ends while its target waits in MPI_Recv, and what
/// cannot work across nodes (a shared window) is refused by name.
#[test]
fn windows_across_nodes_move_data_in_active_target_epochs() {
    let s = Scratch::new("rma_nodes");
    let exe = s.build("rma_nodes");
    let w = |x: &str| OsString::from(x);
    let shm_before = window_segments();
    let out = s.run_words(&[w("--nodes"), w("2"), w("-n"), w("4"), exe.clone().into()]);
    assert_ran("rma_nodes", &out, "rma_nodes: ok on 4 ranks");
    let out = s.run_words(&[w("--nodes"), w("2"), w("-n"), w("3"), exe.into()]);
    assert_ran("rma_nodes", &out, "rma_nodes: ok on 3 ranks");
    assert_eq!(
        window_segments(),
        shm_before,
        "a window's segment stayed in /dev/shm"
    );
}

/// The windows' shared segments in /dev/shm whose creating process has ended: a segment is
/// unlinked once every process of its node has mapped it, so one named by a live process may
/// belong to a job of another test running at the same time; one named by an ended process
/// was left behind.
fn window_segments() -> Vec<String> {
    let creator_gone = |name: &str| {
        let pid = name
            .strip_prefix("ibdyn-win-")
            .and_then(|rest| rest.split('-').next());
        pid.is_some_and(|p| !std::path::Path::new("/proc").join(p).exists())
    };
    let mut v: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| creator_gone(n))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn files_are_written_and_read_through_views_and_pointers() {
    run_ok("io", 3, "io: ok on 3 ranks");
}

#[test]
fn a_tool_starts_the_tool_interface_and_finds_no_variables() {
    run_ok("tool", 2, "tool: ok");
}

#[test]
fn a_freed_key_lives_on_in_the_attributes_that_use_it() {
    run_ok("keyval_free", 2, "keyval_free: ok");
}

/// A user reduction function gets its buffers laid out as the datatype describes (elements
/// one extent apart, with the type's gaps), on every reduction path, intra and inter.
#[test]
fn user_ops_get_buffers_in_the_datatype_layout() {
    run_ok_on_1_and_2_nodes("userop_layout", 4, "userop_layout: ok");
}

/// MPI_SUM and MPI_PROD on every complex datatype, long double complex in x87 precision.
#[test]
fn sum_and_product_on_the_complex_types() {
    run_ok_on_1_and_2_nodes("complex_ops", 3, "complex_ops: ok");
}

/// MPI_Status_set_elements sets basic elements of derived types too (Get_elements gives them
/// back, Get_count the whole copies).
#[test]
fn status_set_elements_counts_basic_elements_of_derived_types() {
    run_ok("set_elements", 1, "set_elements: ok");
}

/// Persistent init calls check their arguments at the init call, with the error classes and
/// messages of the non-persistent forms (MPI_Isend's "rank 4 is out of range ...").
#[test]
fn persistent_inits_check_their_arguments() {
    let s = Scratch::new("init_badargs");
    let exe = s.build("init_badargs");
    let out = s.run(4, &exe);
    assert_ran("init_badargs", &out, "init_badargs: ok");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for want in [
        "invalid rank: MPI_Send_init: rank 4 is out of range for a group of 4 (MPI_ERR_RANK)",
        "invalid tag: MPI_Recv_init: tag -7 is invalid (tags are 0..=MPI_TAG_UB",
        "invalid reduction operation: MPI_Allreduce_init: MPI_OP_NULL is not an operation",
        "invalid root: MPI_Bcast_init: root -3 is out of range for a communicator of 4",
    ] {
        assert!(stdout.contains(want), "no {want:?} in:\n{stdout}");
    }
}

#[test]
fn attribute_calls_with_a_bad_key_fail_with_err_keyval() {
    run_ok("keyval_bad", 2, "keyval_bad: ok");
}

#[test]
fn the_mpi_1_attribute_calls_of_old_codes_work() {
    run_ok("attr_mpi1", 2, "attr_mpi1: ok");
}

#[test]
fn user_error_classes_codes_and_strings() {
    run_ok("user_errors", 1, "user_errors: ok");
}

#[test]
fn graph_topologies_and_neighbor_collectives() {
    run_ok("neighbor", 4, "neighbor: ok");
}

#[test]
fn datatype_envelopes_contents_and_lookups() {
    run_ok("envelope", 1, "envelope: ok");
}

#[test]
fn a_spawn_with_ibdyn_prestart_gets_the_waiting_copy() {
    run_ok(
        "spawn_prestart",
        1,
        "spawn_prestart: ok, the second child was the prestarted copy",
    );
}

#[test]
fn a_spawns_env_info_reaches_the_children_as_open_mpi_takes_it() {
    run_ok(
        "spawn_env",
        1,
        "spawn_env: ok, 2 children with the env of the info and their argument whole",
    );
}
