//go:build unix && !darwin

package jsengine

// ru_maxrss is in kilobytes on Linux and the BSDs.
const maxrssUnit = 1024
