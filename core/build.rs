// `sqlx::migrate!` embeds the migration files when this crate compiles; without this, adding a
// migration would not rebuild the crate.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
