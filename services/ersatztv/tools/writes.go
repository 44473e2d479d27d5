package tools

import "github.com/toolgate/toolgate/internal/toolkit"

func (s *Service) v1Writes() []toolkit.Tool { return nil }

func (s *Service) legacyWrites() []toolkit.Tool { return nil }
