package websearch

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/tool"
)

// Setting names, shared by the settings schema and the code reading them.
const (
	SettingSearxngBaseURL     = "searxng.baseUrl"
	SettingTavilyAPIKey       = "tavily.apiKey"
	SettingTavilySearchDepth  = "tavily.searchDepth"
	SettingTavilyBaseURL      = "tavily.baseUrl"
	SettingBraveAPIKey        = "brave.apiKey"
	SettingBraveBaseURL       = "brave.baseUrl"
	SettingBackendStrategy    = "backendStrategy"
	SettingPrimaryBackend     = "primaryBackend"
	SettingDefaultLanguage    = "defaultLanguage"
	SettingDefaultSafeSearch  = "defaultSafeSearch"
	SettingMaxResults         = "maxResults"
	SettingSearchTimeout      = "searchTimeoutSeconds"
	SettingPageTimeout        = "pageTimeoutSeconds"
	SettingAllPagesTimeout    = "allPagesRetrievalTimeoutSeconds"
	SettingMaxTotalChars      = "maxTotalContentCharacters"
	SettingMinCharsPerResult  = "minContentCharactersPerResult"
	defaultTavilyBaseURL      = "https://api.tavily.com"
	defaultBraveBaseURL       = "https://api.search.brave.com"
	languageAll               = "all"
	maxResultsCap             = 20
	minResultsForBudgetFactor = 20
)

// Strategies say how the configured backends are asked.
const (
	StrategyFailover = "FAILOVER"
	StrategyParallel = "PARALLEL"
	StrategySpecific = "SPECIFIC"
)

// Safe-search policies. Unset means the engine decides.
const (
	SafeOff      = "OFF"
	SafeModerate = "MODERATE"
	SafeStrict   = "STRICT"
)

// Tavily search depths. The fast depths ignore safe search.
const (
	DepthBasic     = "basic"
	DepthAdvanced  = "advanced"
	DepthFast      = "fast"
	DepthUltraFast = "ultra-fast"
)

var (
	strategies   = []string{StrategyFailover, StrategyParallel, StrategySpecific}
	safeSearches = []string{SafeOff, SafeModerate, SafeStrict}
	depths       = []string{DepthBasic, DepthAdvanced, DepthFast, DepthUltraFast}
	// languageTag is the shape of an IETF language tag: a primary subtag
	// of 2 or 3 letters and optional subtags.
	languageTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$`) })
)

// number is a numeric setting with its default and maximum.
type number struct {
	name     string
	def, max int
	meaning  string
}

var numbers = []number{
	{SettingMaxResults, 5, maxResultsCap, "How many results a search returns when the model does not ask for a number; the model may ask for up to 20."},
	{SettingSearchTimeout, 30, 240, "How long one search service may take to answer, in seconds."},
	{SettingPageTimeout, 30, 60, "How long reading one result page may take, in seconds."},
	{SettingAllPagesTimeout, 60, 120, "How long reading all result pages of one search may take together, in seconds."},
	{SettingMaxTotalChars, 100000, 200000, "The most characters of page content one search returns, over all results."},
	{SettingMinCharsPerResult, 2000, 10000, "The characters of the budget kept for each later result, so that the first pages cannot take all of it."},
}

// config is the parsed settings.
type config struct {
	searxngURL   string
	tavilyKey    string
	tavilyDepth  string
	tavilyURL    string
	braveKey     string
	braveURL     string
	strategy     string
	primary      string // a backend name, or ""
	language     string // a tag or "all"
	safeSearch   string // "", OFF, MODERATE or STRICT
	maxResults   int
	searchTO     time.Duration
	pageTO       time.Duration
	allPagesTO   time.Duration
	maxTotal     int
	minPerResult int
}

// parseConfig reads the settings and reports every problem. A setting with
// a problem keeps its default, which is never less safe.
func parseConfig(s tool.Settings) (config, error) {
	var errs []error
	get := func(name string) string { return strings.TrimSpace(s.Get(name)) }
	c := config{
		searxngURL:  get(SettingSearxngBaseURL),
		tavilyKey:   get(SettingTavilyAPIKey),
		tavilyDepth: DepthBasic,
		tavilyURL:   defaultTavilyBaseURL,
		braveKey:    get(SettingBraveAPIKey),
		braveURL:    defaultBraveBaseURL,
		strategy:    StrategyFailover,
		language:    languageAll,
	}
	choice := func(name string, allowed []string, dst *string) {
		v := get(name)
		if v == "" {
			return
		}
		if !slices.Contains(allowed, v) {
			errs = append(errs, fmt.Errorf("setting %s has a value that is not offered (any longer); choose one of %s", name, strings.Join(allowed, ", ")))
			return
		}
		*dst = v
	}
	choice(SettingTavilySearchDepth, depths, &c.tavilyDepth)
	choice(SettingBackendStrategy, strategies, &c.strategy)
	choice(SettingPrimaryBackend, backendNames(), &c.primary)
	choice(SettingDefaultSafeSearch, safeSearches, &c.safeSearch)
	if v := get(SettingDefaultLanguage); v != "" {
		if l, ok := normalizeLanguage(v); ok {
			c.language = l
		} else {
			errs = append(errs, fmt.Errorf("setting %s must be an IETF language tag such as en or de-CH, or %q for every language", SettingDefaultLanguage, languageAll))
		}
	}
	if c.searxngURL != "" {
		if _, err := searxngEndpoint(c.searxngURL); err != nil {
			errs = append(errs, fmt.Errorf("setting %s: %w", SettingSearxngBaseURL, err))
		}
	}
	for _, u := range []struct {
		name string
		dst  *string
	}{{SettingTavilyBaseURL, &c.tavilyURL}, {SettingBraveBaseURL, &c.braveURL}} {
		v := get(u.name)
		if v == "" {
			continue
		}
		if err := checkBaseURL(v); err != nil {
			errs = append(errs, fmt.Errorf("setting %s: %w", u.name, err))
			continue
		}
		*u.dst = strings.TrimRight(v, "/")
	}
	vals := map[string]int{}
	for _, n := range numbers {
		vals[n.name] = n.def
		v := get(n.name)
		if v == "" {
			continue
		}
		i, err := strconv.Atoi(v)
		if err != nil || i <= 0 || i > n.max {
			errs = append(errs, fmt.Errorf("setting %s must be a whole number from 1 to %d (default %d)", n.name, n.max, n.def))
			continue
		}
		vals[n.name] = i
	}
	c.maxResults = vals[SettingMaxResults]
	c.searchTO = time.Duration(vals[SettingSearchTimeout]) * time.Second
	c.pageTO = time.Duration(vals[SettingPageTimeout]) * time.Second
	c.allPagesTO = time.Duration(vals[SettingAllPagesTimeout]) * time.Second
	c.maxTotal = vals[SettingMaxTotalChars]
	c.minPerResult = vals[SettingMinCharsPerResult]
	if c.maxTotal < c.minPerResult*minResultsForBudgetFactor {
		errs = append(errs, fmt.Errorf("setting %s (%d) must be at least %d times %s (%d), so that every one of up to 20 results keeps its share",
			SettingMaxTotalChars, c.maxTotal, minResultsForBudgetFactor, SettingMinCharsPerResult, c.minPerResult))
	}
	return c, errors.Join(errs...)
}

// validate adds the checks across settings: which backends are configured,
// the primary, and safe search.
func (c config) validate() error {
	var errs []error
	configured := c.configured()
	if len(configured) == 0 {
		return fmt.Errorf("no search service is configured: set %s, %s or %s", SettingSearxngBaseURL, SettingTavilyAPIKey, SettingBraveAPIKey)
	}
	if len(configured) >= 2 {
		switch {
		case c.primary != "" && !c.isConfigured(c.primary):
			errs = append(errs, fmt.Errorf("setting %s names %s, which is not configured; choose one of %s", SettingPrimaryBackend, c.primary, strings.Join(configured, ", ")))
		case c.strategy == StrategySpecific && c.primary == "":
			errs = append(errs, fmt.Errorf("setting %s is %s, which needs %s to say which service to ask", SettingBackendStrategy, StrategySpecific, SettingPrimaryBackend))
		}
	}
	if c.safeSearchPolicy() {
		var filtering []string
		for _, name := range configured {
			if c.canFilter(name) {
				filtering = append(filtering, name)
			}
		}
		switch {
		case len(filtering) == 0:
			errs = append(errs, fmt.Errorf("setting %s is %s, but no configured search service can filter (Tavily cannot at the depths %s and %s); choose another depth, configure SearXNG or Brave, or set %s",
				SettingDefaultSafeSearch, c.safeSearch, DepthFast, DepthUltraFast, SafeOff))
		case c.strategy == StrategySpecific && c.primary != "" && c.isConfigured(c.primary) && !c.canFilter(c.primary):
			errs = append(errs, fmt.Errorf("setting %s is %s and only %s is asked, which cannot filter at its depth; choose another depth or primary service", SettingDefaultSafeSearch, c.safeSearch, c.primary))
		}
	}
	return errors.Join(errs...)
}

// safeSearchPolicy reports whether results must be filtered.
func (c config) safeSearchPolicy() bool {
	return c.safeSearch == SafeModerate || c.safeSearch == SafeStrict
}

// configured lists the configured backends in their fixed order.
func (c config) configured() []string {
	var out []string
	for _, n := range backendNames() {
		if c.isConfigured(n) {
			out = append(out, n)
		}
	}
	return out
}

func (c config) isConfigured(name string) bool {
	switch name {
	case NameSearxng:
		return c.searxngURL != ""
	case NameBrave:
		return c.braveKey != ""
	case NameTavily:
		return c.tavilyKey != ""
	}
	return false
}

// canFilter reports whether the backend applies safe search as configured.
func (c config) canFilter(name string) bool {
	if name == NameTavily {
		return c.tavilyDepth == DepthBasic || c.tavilyDepth == DepthAdvanced
	}
	return true
}

// normalizeLanguage accepts "all" (any case) or an IETF tag.
func normalizeLanguage(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, languageAll) || strings.EqualFold(v, "any") {
		return languageAll, true
	}
	if !languageTag().MatchString(v) {
		return "", false
	}
	return v, true
}

// checkBaseURL accepts an absolute http or https address without userinfo,
// query or fragment.
func checkBaseURL(v string) error {
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return errors.New("must be an absolute http or https address such as https://search.example.org")
	case u.User != nil:
		return errors.New("must not carry a user name or password in the address")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("must not carry a query or a fragment")
	}
	return nil
}
