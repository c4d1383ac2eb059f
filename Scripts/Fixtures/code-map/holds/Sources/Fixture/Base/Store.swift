/// A type whose members are added from a folder above it.
struct Store {
    var count = 0
}
