package app

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

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
		classifier, useLocal := a.filterOptions()
		w.filter = guard.New(guard.Options{Logger: a.Logger, Classifier: classifier, LocalClassifier: useLocal,
			Reporter: guard.ReporterFunc(func(r guard.Report) {
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

// filterOptions reads the organization's settings of the prompt-injection
// filter: an external classifier (nil when none is set) and whether the
// built-in local classifier is on (off unless the organization turns it
// on). The plugin loader validated the values.
func (a *App) filterOptions() (*guard.ClassifierOptions, bool) {
	if a.Org == nil {
		return nil, false
	}
	str := func(key string) string {
		if m, ok := a.Org.Settings[key]; ok {
			if s, ok := m.Value.(string); ok {
				return strings.TrimSpace(s)
			}
		}
		return ""
	}
	useLocal := false
	if m, ok := a.Org.Settings["DataPromptInjection.UseLocalClassifier"]; ok {
		if b, ok := m.Value.(bool); ok {
			useLocal = b
		}
	}
	u := str("DataPromptInjection.ClassifierUrl")
	if u == "" {
		return nil, useLocal
	}
	o := &guard.ClassifierOptions{URL: u}
	if f, err := strconv.ParseFloat(str("DataPromptInjection.ClassifierThreshold"), 64); err == nil {
		o.Threshold = f
	}
	if n, err := strconv.Atoi(str("DataPromptInjection.ClassifierTimeoutSeconds")); err == nil {
		o.Timeout = time.Duration(n) * time.Second
	}
	if key := str("DataPromptInjection.ClassifierApiKey"); key != "" {
		o.Header = http.Header{"Authorization": {"Bearer " + key}}
	}
	return o, useLocal
}
