package placement

import "github.com/jobctl/jobctl/engine"

// num is the engine's number format, short for the reasons.
var num = engine.FormatNumber
