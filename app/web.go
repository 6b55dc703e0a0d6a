package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/stewardhq/steward/guard"
	"github.com/stewardhq/steward/tools/webcontent"
	"github.com/stewardhq/steward/web"
)

// webParts are built on first use, so commands that read no page start
// fast.
type webParts struct {
	once    sync.Once
	service *web.Service
	filter  *guard.Filter
	reports []guard.Report
	mu      sync.Mutex
}

func (a *App) web() *webParts {
	a.webOnce.once.Do(func() {
		w := &a.webOnce
		o := a.webOptions
		if o.Logger == nil {
			o.Logger = a.Logger
		}
		w.service = web.NewService(o)
		w.filter = guard.New(guard.Options{Logger: a.Logger, Reporter: guard.ReporterFunc(func(r guard.Report) {
			w.mu.Lock()
			w.reports = append(w.reports, r)
			w.mu.Unlock()
		})})
	})
	return &a.webOnce
}

// WebService is the one page retrieval service of this App.
func (a *App) WebService() *web.Service { return a.web().service }

// Filter is the prompt-injection filter of this App.
func (a *App) Filter() *guard.Filter { return a.web().filter }

// TakeFilterReports returns what the filter reported since the last call.
func (a *App) TakeFilterReports() []guard.Report {
	w := a.web()
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.reports
	w.reports = nil
	return r
}

// UserPageChars is the character budget of a page the user reads or
// attaches: the same as read_web_page's default.
const UserPageChars = 30000

// ReadUserPage reads an address the user typed, with the user-chosen policy
// (which lifts the target restrictions: the user may read their own
// network), and prepares it the way a model would get it. Never call it with
// an address that came from a model.
func (a *App) ReadUserPage(ctx context.Context, rawURL string, maxChars int) (webcontent.Prepared, *web.Page, error) {
	p, err := a.WebService().Retrieve(ctx, rawURL, web.Options{Policy: web.UserChosen})
	if err != nil {
		return webcontent.Prepared{}, nil, fmt.Errorf("reading %s: %w", rawURL, err)
	}
	end := a.Filter().BeginAction()
	defer end()
	return webcontent.Prepare(ctx, a.Filter(), p, maxChars), p, nil
}
