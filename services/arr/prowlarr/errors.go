package prowlarr

import "github.com/toolgate/toolgate/internal/toolerr"

func invalid(msg string) error { return toolerr.New(toolerr.InvalidArgument, "%s", msg) }
