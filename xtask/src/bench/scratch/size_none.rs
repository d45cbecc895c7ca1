//! Binary-size baseline: depends on cuda-driver-pfn and resolves nothing.
fn main() {
    println!("{}", std::hint::black_box("no lookup"));
}
