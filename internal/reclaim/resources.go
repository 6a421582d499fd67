package reclaim

import "github.com/backfill-dev/backfill/internal/colocation"

// Resources are milli-CPU and bytes, the units of the batch resources.
type Resources = colocation.Resources
