//! Tests of ClusterSpec, cluster flags and device-name matching.

use super::*;
use ferroflow_core::Code;

#[test]
fn dense_and_sparse() {
    let c = ClusterSpec::new(&[("worker", vec!["w0:1", "w1:2"]), ("ps", vec!["p0:3"])]).unwrap();
    assert_eq!(c.jobs(), vec!["ps", "worker"]);
    assert_eq!(c.num_tasks("worker").unwrap(), 2);
    assert_eq!(c.task_address("ps", 0).unwrap(), "p0:3");
    assert_eq!(
        c.task_names(),
        vec!["/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"]
    );
    let s = ClusterSpec::from_sparse(&[("worker", vec![(3, "w3:1"), (1, "w1:1")])]).unwrap();
    assert_eq!(s.task_indices("worker").unwrap(), vec![1, 3]);
    assert_eq!(s.task_names(), vec!["/job:worker/replica:0/task:1", "/job:worker/replica:0/task:3"]);
    assert_eq!(s.to_string(), "worker=1@w1:1,3@w3:1");
    assert_eq!(c.to_string(), "ps=p0:3;worker=w0:1,w1:2");
}

#[test]
fn proto_round_trip_sorted() {
    let c = ClusterSpec::new(&[("worker", vec!["w0:1"]), ("chief", vec!["c:1"]), ("ps", vec!["p:1"])]).unwrap();
    let p = c.to_proto();
    let names: Vec<&str> = p.job.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, vec!["chief", "ps", "worker"]);
    assert_eq!(p.job[2].tasks.get(&0).map(String::as_str), Some("w0:1"));
    assert_eq!(ClusterSpec::from_proto(&p).unwrap(), c);
    let sd = c.server_def("ps", 0).unwrap();
    assert_eq!((sd.job_name.as_str(), sd.task_index, sd.protocol.as_str()), ("ps", 0, "grpc"));
    assert!(c.server_def("ps", 1).is_err());
}

#[test]
fn validation_errors_explain() {
    let e = ClusterSpec::new(&[("ps", vec![])]).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("job 'ps' has no tasks"), "{e}");
    let e = ClusterSpec::new(&[("ps", vec!["nohost"])]).unwrap_err();
    assert!(e.message.contains("'nohost'") && e.message.contains("localhost:2222"), "{e}");
    let e = ClusterSpec::new(&[("ps", vec!["h:99999"])]).unwrap_err();
    assert!(e.message.contains("task 0 of job 'ps'"), "{e}");
    let e = ClusterSpec::new(&[("ps", vec!["h:1"]), ("worker", vec!["h:2", "h:1"])]).unwrap_err();
    assert!(e.message.contains("/job:ps/task:0") && e.message.contains("/job:worker/task:1"), "{e}");
    let e = ClusterSpec::new(&[("my-job", vec!["h:1"])]).unwrap_err();
    assert!(e.message.contains("'my-job'") && e.message.contains("'my_job'"), "{e}");
    assert!(ClusterSpec::new(&[("9ps", vec!["h:1"])]).is_err());
    assert!(ClusterSpec::from_sparse(&[("ps", vec![(-1, "h:1")])]).is_err());
    // Port 0 ("any free port") may repeat; IPv6 literals are fine.
    ClusterSpec::new(&[("localhost", vec!["localhost:0", "localhost:0"]), ("v6", vec!["[::1]:2222"])]).unwrap();
}

#[test]
fn lookups_list_what_exists() {
    let c = ClusterSpec::new(&[("ps", vec!["p:1", "p:2"]), ("worker", vec!["w:1"])]).unwrap();
    let e = c.task_address("chief", 0).unwrap_err();
    assert!(e.message.contains("known jobs: [ps, worker]"), "{e}");
    let e = c.task_address("ps", 5).unwrap_err();
    assert!(e.message.contains("its tasks are [0, 1]"), "{e}");
    assert!(c.num_tasks("x").is_err());
    assert!(c.has_task("ps", 1) && !c.has_task("ps", 2));
}

#[test]
fn classic_flags() {
    let f = ClusterFlags::parse([
        "--ps_hosts",
        "a:1,b:2",
        "--worker_hosts=c:3",
        "--job_name",
        "ps",
        "--task_index=1",
        "--train_steps",
        "10",
    ])
    .unwrap();
    assert_eq!(f.cluster.task_address("ps", 1).unwrap(), "b:2");
    assert_eq!(f.cluster.task_address("worker", 0).unwrap(), "c:3");
    assert_eq!(f.task().unwrap(), ("ps".to_string(), 1));
    assert_eq!(f.rest, vec!["--train_steps", "10"]);

    let e = ClusterFlags::parse(["--ps_hosts", "a:1,", "--job_name", "ps"]).unwrap_err();
    assert!(e.message.contains("trailing comma"), "{e}");
    let e = ClusterFlags::parse(["--ps_hosts", "a:1", "--job_name", "worker"]).unwrap_err();
    assert!(e.message.contains("--job_name") && e.message.contains("known jobs: [ps]"), "{e}");
    let e = ClusterFlags::parse(["--ps_hosts", "a:1", "--job_name", "ps", "--task_index", "2"]).unwrap_err();
    assert!(e.message.contains("no task 2"), "{e}");
    let e = ClusterFlags::parse(["--ps_hosts", "a:1", "--task_index", "x"]).unwrap_err();
    assert!(e.message.contains("'x'"), "{e}");
    let e = ClusterFlags::parse(["--ps_hosts"]).unwrap_err();
    assert!(e.message.contains("needs a value"), "{e}");
    let f = ClusterFlags::parse(["--ps_hosts", "a:1"]).unwrap();
    assert!(f.task().unwrap_err().message.contains("--job_name is missing"));
}

#[test]
fn cluster_flag() {
    let f =
        ClusterFlags::parse(["--cluster", "ps=h:1;worker=h:2, h:3", "--job_name=worker", "--task_index=1"]).unwrap();
    assert_eq!(f.cluster.task_address("worker", 1).unwrap(), "h:3");
    assert_eq!(f.task().unwrap(), ("worker".to_string(), 1));
    assert!(ClusterSpec::parse_cluster_flag("ps").unwrap_err().message.contains("no '='"));
    assert!(ClusterSpec::parse_cluster_flag("").is_err());
    assert!(ClusterSpec::parse_cluster_flag("ps=h:1;ps=h:2").unwrap_err().message.contains("twice"));
    let e = ClusterFlags::parse(["--cluster=ps=h:1", "--worker_hosts=h:2"]).unwrap_err();
    assert!(e.message.contains("not both"), "{e}");
}
