-- Example organization configuration plugin for Steward.
-- Copy this folder to $STEWARD_CONFIG_DIR/plugins/org/<your-id>/ and edit it.
-- Organization plugins rank above local ones; within a rank PRIORITY decides
-- and the later plugin wins. Every setting is LOCKED unless
-- "<Key>.AllowUserOverride" = true makes it an editable default.
-- Secrets (API keys, passwords) are accepted only encrypted as ENC:v1:...,
-- decrypted with $STEWARD_CONFIG_ENCRYPTION_SECRET (32 bytes, base64).

ID = "00000000-0000-4000-8000-000000000001"
NAME = "Example organization configuration"
DESCRIPTION = "Documents every setting Steward reads from a configuration plugin."
VERSION = "1.0.0"
AUTHORS = { "IT department" }
SUPPORT_CONTACT = "it@example.org"
SOURCE_URL = "https://example.org/steward-config"
CATEGORIES = { "CORE" }
TARGET_GROUPS = { "EVERYONE" }
IS_MAINTAINED = true
DEPRECATION_MESSAGE = ""
TYPE = "CONFIGURATION"
PRIORITY = 0

CONFIG = {}
CONFIG["LLM_PROVIDERS"] = {}
CONFIG["EMBEDDING_PROVIDERS"] = {}
CONFIG["MAILBOXES"] = {}
CONFIG["DATA_SOURCES"] = {}
CONFIG["MCP_SERVERS"] = {}
CONFIG["SETTINGS"] = {}

-- A provider. Id, InstanceName, UsedLLMProvider, Host and Model.Id are
-- required; Host is "NONE" for cloud providers, or OLLAMA, LM_STUDIO,
-- LLAMA_CPP, VLLM with UsedLLMProvider = "SELF_HOSTED".
-- CONFIG["LLM_PROVIDERS"][#CONFIG["LLM_PROVIDERS"]+1] = {
--     ["Id"] = "company-llm",
--     ["InstanceName"] = "Company model",
--     ["UsedLLMProvider"] = "SELF_HOSTED",
--     ["Host"] = "VLLM",
--     ["Hostname"] = "https://llm.example.org",
--     ["Model"] = { ["Id"] = "meta-llama/Llama-3.3-70B-Instruct", ["DisplayName"] = "Llama 3.3 70B" },
--     ["AdditionalJsonApiParameters"] = "\"temperature\": 0.3",
--     ["APIKey"] = "ENC:v1:...",
-- }

-- An embedding provider (used by mailboxes to search by meaning).
-- CONFIG["EMBEDDING_PROVIDERS"][#CONFIG["EMBEDDING_PROVIDERS"]+1] = {
--     ["Id"] = "company-embeddings", ["Name"] = "Company embeddings",
--     ["UsedLLMProvider"] = "SELF_HOSTED", ["Host"] = "OLLAMA", ["Hostname"] = "http://127.0.0.1:11434",
--     ["Model"] = { ["Id"] = "nomic-embed-text" },
-- }

-- A mailbox. Security is TLS or STARTTLS; Auth is PASSWORD or XOAUTH2;
-- RequiredProviderConfidence is VERY_LOW..HIGH; OutboundDataRestriction is
-- UNRESTRICTED, ONLY_LINKS_FROM_CHAT or ONLY_CONFIGURED_SERVICES.
-- CONFIG["MAILBOXES"][#CONFIG["MAILBOXES"]+1] = {
--     ["Id"] = "team-inbox", ["Name"] = "Team inbox",
--     ["Host"] = "imap.example.org", ["Port"] = 993, ["Security"] = "TLS",
--     ["Auth"] = "PASSWORD", ["Username"] = "team@example.org", ["Secret"] = "ENC:v1:...",
--     ["Folders"] = { "INBOX" }, ["EmbeddingProviderId"] = "company-embeddings",
--     ["RequiredProviderConfidence"] = "HIGH", ["OutboundDataRestriction"] = "ONLY_LINKS_FROM_CHAT",
-- }

-- A data source: an ERI v1 server (the reference's format). Id, Name, Type,
-- Hostname (with https://; http:// only for 127.0.0.1 or ::1), AuthMethod
-- (NONE, USERNAME_PASSWORD or TOKEN), SecurityPolicy (ALLOW_ANY, or
-- SELF_HOSTED: only self-hosted providers may see it) and
-- SelectedRetrievalId (see steward sources show) are required. Port is
-- 1..65535 (default: the address's or the scheme's); MaxMatches, the
-- results per page, is 1..65535 (default 10); RequiredProviderConfidence
-- (default NONE) is what the chat provider must meet. TOKEN needs Token;
-- USERNAME_PASSWORD needs Password and UsernamePasswordMode
-- SHARED_USERNAME_AND_PASSWORD (with Username) or
-- OS_USERNAME_SHARED_PASSWORD. Secrets only as ENC:v1:... The user cannot
-- change or remove a data source of an organization plugin.
-- CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = {
--     ["Id"] = "hr-handbook", ["Name"] = "HR handbook", ["Type"] = "ERI_V1",
--     ["Hostname"] = "https://eri.example.org", ["Port"] = 443,
--     ["AuthMethod"] = "TOKEN", ["Token"] = "ENC:v1:...",
--     ["SecurityPolicy"] = "SELF_HOSTED", ["SelectedRetrievalId"] = "bm25", ["MaxMatches"] = 10,
-- }

-- A local folder (Type LOCAL_DIRECTORY) or file (LOCAL_FILE), Steward's
-- addition to the format: Path (absolute) is required; Description is shown
-- to the model; RequiredProviderConfidence (default HIGH) must be met by the
-- chat provider and the embedding provider; EmbeddingProviderId names an
-- embedding provider above (absent: search by words only); MaxChunkTokens
-- (32..8192, default the provider's token limit) and ChunkOverlapTokens
-- (default 300, 0 for none) shape the chunks; SecurityPolicy defaults to
-- ALLOW_ANY.
-- CONFIG["DATA_SOURCES"][#CONFIG["DATA_SOURCES"]+1] = {
--     ["Id"] = "team-share", ["Name"] = "Team share", ["Type"] = "LOCAL_DIRECTORY",
--     ["Path"] = "/srv/share/team", ["Description"] = "Project plans, minutes and specifications of the team.",
--     ["RequiredProviderConfidence"] = "HIGH", ["EmbeddingProviderId"] = "company-embeddings", ["MaxMatches"] = 10,
-- }

-- An MCP server whose tools join the registry as the collection mcp__<Id>.
-- Give Command (and Args, Env) for a server Steward starts, or Url (and
-- Headers) for streamable HTTP. Env and Headers values are secrets: a name
-- that looks like a credential must be ENC:v1: encrypted. OutboundData is
-- NONE, CONFIGURED_SERVICE, THIRD_PARTY_QUERIES or MODEL_CHOSEN_ADDRESSES
-- (default, the most open); UntrustedContent defaults to true;
-- OutboundDataRestriction, RequiredProviderConfidence and DataSecurity are
-- what a chat keeps once the server's content reached the model. Also:
-- Type (stdio, http, sse), EnabledTools, DisabledTools, TimeoutSeconds (60),
-- StartupTimeoutSeconds (30), MaxResultChars (30000), Disabled.
-- CONFIG["MCP_SERVERS"][#CONFIG["MCP_SERVERS"]+1] = {
--     ["Id"] = "wiki", ["Name"] = "Team wiki", ["Url"] = "https://mcp.example.org/mcp",
--     ["Headers"] = { ["Authorization"] = "ENC:v1:..." },
--     ["OutboundData"] = "CONFIGURED_SERVICE", ["MinimumProviderConfidence"] = "HIGH",
--     ["RequiredProviderConfidence"] = "HIGH", ["OutboundDataRestriction"] = "ONLY_CONFIGURED_SERVICES",
-- }

-- Application settings.

-- DataApp.EnabledPreviewFeatures: preview features switched on (list of strings), e.g. PRE_RAG_2024, PRE_MAILBOXES_2026; adds up across plugins. Default empty.
-- CONFIG["SETTINGS"]["DataApp.EnabledPreviewFeatures"] = { "PRE_RAG_2024", "PRE_MAILBOXES_2026" }

-- DataChat.PreselectedDataSourceIds: the data sources a new chat searches (list of IDs); empty: every data source the provider may use (automatic selection). Locked, a chat cannot choose others. Default: automatic.
-- CONFIG["SETTINGS"]["DataChat.PreselectedDataSourceIds"] = { "hr-handbook" }

-- DataChat.PreselectedDataSourcesRetrievalMode: how a chat searches its data sources (string): SEMANTIC_SEARCH (the model searches with semantic_search when it can) or EVERY_MESSAGE (every message is searched). Default SEMANTIC_SEARCH.
-- CONFIG["SETTINGS"]["DataChat.PreselectedDataSourcesRetrievalMode"] = "SEMANTIC_SEARCH"

-- DataConfidence.ConfidenceScheme: how providers get their confidence (string): TRUST_ALL, TRUST_USA_EUROPE, TRUST_USA, TRUST_EUROPE, TRUST_ASIA, LOCAL_TRUST_ONLY or CUSTOM. Default TRUST_ALL.
-- CONFIG["SETTINGS"]["DataConfidence.ConfidenceScheme"] = "TRUST_ALL"

-- DataConfidence.CustomConfidenceScheme: level per provider name under CUSTOM (table of string to level); a missing provider is UNKNOWN.
-- CONFIG["SETTINGS"]["DataConfidence.CustomConfidenceScheme"] = { ["OPEN_AI"] = "MEDIUM", ["SELF_HOSTED"] = "HIGH" }

-- DataConfidence.EnforceGlobalMinimumConfidence: enforce the global minimum below (boolean). Default false.
-- CONFIG["SETTINGS"]["DataConfidence.EnforceGlobalMinimumConfidence"] = false

-- DataConfidence.GlobalMinimumConfidence: lowest confidence any provider must have (level). Default NONE.
-- CONFIG["SETTINGS"]["DataConfidence.GlobalMinimumConfidence"] = "NONE"

-- DataMCP.ClientConfidence: the confidence steward mcp serve gives a connecting MCP client (level); locked, the user may only go lower. Default UNKNOWN.
-- CONFIG["SETTINGS"]["DataMCP.ClientConfidence"] = "LOW"

-- DataMailboxes.AllowedServers: IMAP hosts mailboxes may use (list of strings); an empty list allows none. Default: any host.
-- CONFIG["SETTINGS"]["DataMailboxes.AllowedServers"] = { "imap.example.org" }

-- DataMailboxes.MinimumOutboundDataRestriction: tightens every mailbox whose own restriction is less strict. Default: none.
-- CONFIG["SETTINGS"]["DataMailboxes.MinimumOutboundDataRestriction"] = "ONLY_LINKS_FROM_CHAT"

-- DataPromptInjection.ClassifierApiKey: sent as "Authorization: Bearer <key>" to the classifier (string, ENC:v1 encrypted). Default: none.
-- CONFIG["SETTINGS"]["DataPromptInjection.ClassifierApiKey"] = "ENC:v1:..."

-- DataPromptInjection.ClassifierThreshold: the classifier score from which a text counts as an injection (string, a number above 0 and at most 1). Default "0.5".
-- CONFIG["SETTINGS"]["DataPromptInjection.ClassifierThreshold"] = "0.5"

-- DataPromptInjection.ClassifierTimeoutSeconds: how long one classifier request may take (string, whole seconds from 1 to 120). Default "10".
-- CONFIG["SETTINGS"]["DataPromptInjection.ClassifierTimeoutSeconds"] = "10"

-- DataPromptInjection.ClassifierUrl: an http(s) address of an external prompt-injection classifier the organization hosts; every filtered batch is POSTed there as {"texts": [...]} (see the guard package). Unreachable, it is skipped with a warning. Default: none.
-- CONFIG["SETTINGS"]["DataPromptInjection.ClassifierUrl"] = "https://classifier.example.org/v1/classify"

-- DataPromptInjection.UseLocalClassifier: run Steward's built-in local classifier after the rules (boolean); off by default, it flags ordinary sentences on about one real page in nine. Default false.
-- CONFIG["SETTINGS"]["DataPromptInjection.UseLocalClassifier"] = true

-- DataSourceSecuritySettings.TrustedProviderIds: provider IDs trusted for data-source security; does not raise confidence (list of strings). Default empty.
-- CONFIG["SETTINGS"]["DataSourceSecuritySettings.TrustedProviderIds"] = { "company-llm" }

-- DataTools.DisabledToolIds: tool or collection IDs switched off (list of strings). Default empty.
-- CONFIG["SETTINGS"]["DataTools.DisabledToolIds"] = { }

-- DataTools.EnableTools: switch all tools on or off (boolean). Default true.
-- CONFIG["SETTINGS"]["DataTools.EnableTools"] = true

-- DataTools.MinimumProviderConfidenceByToolId: minimum provider confidence per tool or collection ID (table of string to level); the highest of several applies. Default: the tools' own.
-- CONFIG["SETTINGS"]["DataTools.MinimumProviderConfidenceByToolId"] = { ["read_web_page"] = "MEDIUM" }

-- Tool settings, addressed as "<toolId>.<field>". Values are strings.

-- read_web_page.timeoutSeconds (string): How long loading one page may take, redirects and reading included: a whole number of seconds from 1 to 240 Default: 60.
-- CONFIG["SETTINGS"]["read_web_page.timeoutSeconds"] = "60"

-- read_web_page.maxContentCharacters (string): The most characters of page content the model receives; longer pages are truncated at a paragraph. A whole number from 1 to 100000 Default: 30000.
-- CONFIG["SETTINGS"]["read_web_page.maxContentCharacters"] = "30000"

-- read_web_page.allowedPrivateHosts (string): Hosts on a private network the tool may read, separated by line breaks, commas or semicolons: a host name, an IP address, or *.example.org for every subdomain of example.org (not example.org itself). No scheme, port or path. They are read only for providers with HIGH confidence, however the organization's trusted lists rate a provider, and the chat then requires HIGH Default: none.
-- CONFIG["SETTINGS"]["read_web_page.allowedPrivateHosts"] = ""

-- read_web_page.freeAddressChoice (one of OFF, ON): OFF: the model reads only addresses given word for word in the conversation (system prompt, user messages and their documents, tool results). ON: it may also read addresses it chose itself Default: OFF.
-- CONFIG["SETTINGS"]["read_web_page.freeAddressChoice"] = "OFF"

-- read_web_page.useOsSignIn (one of OFF, ON): OFF: pages are read without signing in. ON: when an allowed private host asks for it, the tool signs in as the user with the operating-system sign-in (Kerberos, the ticket from kinit or the system's login, read from a FILE ticket cache). Only over HTTPS, only to the host and port of the address asked for (never after a redirect to another host), only when all the host's addresses are private and it is on the allowed private hosts, and only for providers with HIGH confidence Default: OFF.
-- CONFIG["SETTINGS"]["read_web_page.useOsSignIn"] = "OFF"

-- search_confluence.baseUrl (string): The https address of the Confluence wiki, with its context path: https://wiki.example.org/ or https://intranet.example.org/confluence/ (Data Center), https://example.atlassian.net/wiki/ (Cloud). No user name, query or fragment. Every request and redirect of a search stays below it, and read_web_page may open its pages in a chat restricted after reading mails Default: none.
-- CONFIG["SETTINGS"]["search_confluence.baseUrl"] = ""

-- search_confluence.mode (one of SEARCH_PAGE, REST): SEARCH_PAGE reads the Data Center search page (dosearchsite.action) like a web page, signed in with the operating-system sign-in where the wiki asks for it; no token. REST asks the REST API (/rest/api/search) of Confluence Cloud or Data Center with the token below and returns the hits as a list Default: SEARCH_PAGE.
-- CONFIG["SETTINGS"]["search_confluence.mode"] = "SEARCH_PAGE"

-- search_confluence.email (string): REST on Confluence Cloud: the e-mail address of the Atlassian account the API token belongs to Default: none.
-- CONFIG["SETTINGS"]["search_confluence.email"] = ""

-- search_confluence.apiToken (secret string, ENC:v1: only, never a default): REST on Confluence Cloud: an API token of that account (id.atlassian.com, Security, API tokens), classic or scoped (with the scope search:confluence, and read:confluence-content.all for page texts). Sent as Basic authentication with the e-mail, only to the wiki's API Default: none.
-- CONFIG["SETTINGS"]["search_confluence.apiToken"] = "ENC:v1:..."

-- search_confluence.cloudId (string): REST on Confluence Cloud with a scoped API token: the site's cloud ID (a UUID; https://<site>.atlassian.net/_edge/tenant_info shows it). Scoped tokens only work at https://api.atlassian.com/ex/confluence/<cloud ID>/, where the requests then go. Leave it empty for a classic token Default: none.
-- CONFIG["SETTINGS"]["search_confluence.cloudId"] = ""

-- search_confluence.personalAccessToken (secret string, ENC:v1: only, never a default): REST on Confluence Data Center 7.9 or later: a personal access token (profile, Personal Access Tokens), sent as a Bearer token only to the wiki's API Default: none.
-- CONFIG["SETTINGS"]["search_confluence.personalAccessToken"] = "ENC:v1:..."

-- search_confluence.apiBaseUrl (string): The https address the REST API is asked at, to be set only for a gateway or proxy in front of it; empty means the wiki address (or, with a cloud ID, Atlassian's address for scoped tokens) Default: none.
-- CONFIG["SETTINGS"]["search_confluence.apiBaseUrl"] = ""

-- search_confluence.defaultSpaceKey (string): The key of the space searched when the model names none, such as OPS; empty searches every space the account may read Default: none.
-- CONFIG["SETTINGS"]["search_confluence.defaultSpaceKey"] = ""

-- search_confluence.timeoutSeconds (string): How long one search may take, every request, redirect and page text included: a whole number of seconds from 1 to 120 Default: 30.
-- CONFIG["SETTINGS"]["search_confluence.timeoutSeconds"] = "30"

-- search_confluence.maxContentCharacters (string): The most characters of wiki content one result brings the model (the search page, or the hits and page texts); a whole number from 1000 to 100000 Default: 30000.
-- CONFIG["SETTINGS"]["search_confluence.maxContentCharacters"] = "30000"

-- search_confluence.pageBodies (string): REST only: of how many of the best hits of a result the page text is fetched and included, within the character budget: a whole number from 0 to 5 Default: 3.
-- CONFIG["SETTINGS"]["search_confluence.pageBodies"] = "3"

-- search_confluence.useOsSignIn (one of ON, OFF): SEARCH_PAGE only. ON: when the wiki asks for it, sign in as the user with the operating-system sign-in (Kerberos), only over https to the wiki's own host, only when all the host's addresses are private, and only for providers with HIGH confidence. OFF: never sign in Default: ON.
-- CONFIG["SETTINGS"]["search_confluence.useOsSignIn"] = "ON"

-- web_search.searxng.baseUrl (string): The address of a SearXNG instance with the JSON format enabled (search.formats in settings.yml), e.g. https://searx.example.org. Leave it empty to not use SearXNG Default: none.
-- CONFIG["SETTINGS"]["web_search.searxng.baseUrl"] = ""

-- web_search.brave.apiKey (secret string, ENC:v1: only, never a default): The subscription token of the Brave Search API (Web Search). Leave it empty to not use Brave Search Default: none.
-- CONFIG["SETTINGS"]["web_search.brave.apiKey"] = "ENC:v1:..."

-- web_search.brave.baseUrl (string): The address of the Brave Search API, to be changed only for a proxy or gateway Default: https://api.search.brave.com.
-- CONFIG["SETTINGS"]["web_search.brave.baseUrl"] = "https://api.search.brave.com"

-- web_search.tavily.apiKey (secret string, ENC:v1: only, never a default): The API key of Tavily. Leave it empty to not use Tavily Default: none.
-- CONFIG["SETTINGS"]["web_search.tavily.apiKey"] = "ENC:v1:..."

-- web_search.tavily.searchDepth (one of basic, advanced, fast, ultra-fast): basic or advanced. fast and ultra-fast ignore safe search, so Tavily is then not asked while a safe-search policy is set Default: basic.
-- CONFIG["SETTINGS"]["web_search.tavily.searchDepth"] = "basic"

-- web_search.tavily.baseUrl (string): The address of the Tavily API, to be changed only for a proxy or gateway Default: https://api.tavily.com.
-- CONFIG["SETTINGS"]["web_search.tavily.baseUrl"] = "https://api.tavily.com"

-- web_search.backendStrategy (one of FAILOVER, PARALLEL, SPECIFIC): With several services: FAILOVER asks them in turn (the primary first) until one finds something; PARALLEL asks all at once and merges the results; SPECIFIC asks only the primary Default: FAILOVER.
-- CONFIG["SETTINGS"]["web_search.backendStrategy"] = "FAILOVER"

-- web_search.primaryBackend (one of SEARXNG, BRAVE, TAVILY): The service asked first (FAILOVER) or only (SPECIFIC); it must be configured. Not used by PARALLEL Default: none.
-- CONFIG["SETTINGS"]["web_search.primaryBackend"] = ""

-- web_search.defaultLanguage (string): The language searched when the model names none: an IETF tag such as en or de-CH, or all for every language Default: none.
-- CONFIG["SETTINGS"]["web_search.defaultLanguage"] = ""

-- web_search.defaultSafeSearch (one of OFF, MODERATE, STRICT): OFF, MODERATE or STRICT; empty lets each service decide. With MODERATE or STRICT, a service that cannot filter is never asked Default: none.
-- CONFIG["SETTINGS"]["web_search.defaultSafeSearch"] = ""

-- web_search.maxResults (string): How many results a search returns when the model does not ask for a number; the model may ask for up to 20. A whole number from 1 to 20 Default: 5.
-- CONFIG["SETTINGS"]["web_search.maxResults"] = "5"

-- web_search.searchTimeoutSeconds (string): How long one search service may take to answer, in seconds. A whole number from 1 to 240 Default: 30.
-- CONFIG["SETTINGS"]["web_search.searchTimeoutSeconds"] = "30"

-- web_search.pageTimeoutSeconds (string): How long reading one result page may take, in seconds. A whole number from 1 to 60 Default: 30.
-- CONFIG["SETTINGS"]["web_search.pageTimeoutSeconds"] = "30"

-- web_search.allPagesRetrievalTimeoutSeconds (string): How long reading all result pages of one search may take together, in seconds. A whole number from 1 to 120 Default: 60.
-- CONFIG["SETTINGS"]["web_search.allPagesRetrievalTimeoutSeconds"] = "60"

-- web_search.maxTotalContentCharacters (string): The most characters of page content one search returns, over all results. A whole number from 1 to 200000 Default: 100000.
-- CONFIG["SETTINGS"]["web_search.maxTotalContentCharacters"] = "100000"

-- web_search.minContentCharactersPerResult (string): The characters of the budget kept for each later result, so that the first pages cannot take all of it. A whole number from 1 to 10000 Default: 2000.
-- CONFIG["SETTINGS"]["web_search.minContentCharactersPerResult"] = "2000"

-- Any setting above can become an editable default instead of a locked value:
-- CONFIG["SETTINGS"]["read_web_page.freeAddressChoice.AllowUserOverride"] = true
