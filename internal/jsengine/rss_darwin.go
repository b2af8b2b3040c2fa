package jsengine

// ru_maxrss is in bytes on Darwin.
const maxrssUnit = 1
