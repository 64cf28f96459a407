package placement

import "github.com/jobctl/jobctl/engine"

// num and bytesIEC are the engine's number formats, short for the reasons.
var (
	num      = engine.FormatNumber
	bytesIEC = engine.FormatBytes
)
