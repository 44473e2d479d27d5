package tools

import "github.com/toolgate/toolgate/internal/toolkit"

func (s *Service) writes() []toolkit.Tool { return nil }
