//! Compiles ferroflow's TensorFlow-compatible .proto subset with protox (no protoc needed).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::Path::new("proto");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir.join("tensorflow"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "proto") {
            files.push(path.strip_prefix(dir)?.to_path_buf());
        }
    }
    files.sort();
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(&files, [dir])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .bytes(".tensorflow.TensorProto.tensor_content")
        .compile_fds(fds)?;
    Ok(())
}
