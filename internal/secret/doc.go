// Package secret finds and masks secrets: the exact values in use (API
// keys, passwords) and strings shaped like a provider's key. One Detector
// serves the post-save cassette scan (evals/replay), the console trace and
// the JSON Lines trace (through Writer), so that all three agree on what a
// secret is.
//
// # Secrets in use
//
// New takes the exact values in use. A value shorter than MinLen (6 bytes)
// is ignored: it would match ordinary text. Each value is also looked for
// URL-escaped (query and path escaping), JSON-escaped (as encoding/json
// writes it, and with "/" written "\/" as some providers echo it) and with
// those escapes' backslashes doubled (a YAML double-quoted string). A
// value cut off by a display limit is found too: at least MinLen bytes of
// its start right before "…", as the console trace shortens long inputs.
//
// # Key shapes
//
// The shapes follow the providers' documented key formats; a Kind is named
// after the matching gitleaks rule (config/gitleaks.toml in
// github.com/gitleaks/gitleaks) where one exists. Every shape starts a
// word: the byte before it is not a letter, digit or "_", so "task-…"
// holds no sk- key. "Ends a word" means the same of the byte after it.
//
//   - openai-api-key: sk-[A-Za-z0-9_-]{16,}. OpenAI keys (sk-…, sk-proj-…,
//     sk-svcacct-…, sk-admin-…), DeepSeek's (sk- and 32 hex) and other
//     OpenAI-compatible providers'; gitleaks openai-api-key, generalised.
//   - anthropic-api-key: sk-ant-[A-Za-z0-9_-]{16,}. Anthropic's
//     sk-ant-api03-… and sk-ant-admin01-…; gitleaks anthropic-api-key,
//     anthropic-admin-api-key.
//   - zhipu-api-key: [0-9a-fA-F]{32}\.[A-Za-z0-9]{16}, ending a word.
//     Zhipu / BigModel (GLM) keys are "{id}.{secret}" (open.bigmodel.cn
//     docs: the key is split at "." to sign a JWT); the id is 32 hex, the
//     secret 16 letters and digits.
//   - gcp-api-key: AIza[A-Za-z0-9_-]{35}, ending a word. Google Cloud and
//     Gemini API keys; gitleaks gcp-api-key.
//   - github-pat: gh[pousr]_[A-Za-z0-9]{36,}. GitHub's ghp_ (personal),
//     gho_ (OAuth), ghu_ and ghs_ (apps), ghr_ (refresh) tokens (GitHub
//     blog, "Behind GitHub's new authentication token formats"); gitleaks
//     github-pat, github-oauth, github-app-token, github-refresh-token.
//   - github-fine-grained-pat: github_pat_[A-Za-z0-9_]{22,}; gitleaks
//     github-fine-grained-pat.
//   - aws-access-token: (AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}, ending a word.
//     AWS access key IDs (IAM docs: AKIA long-term, ASIA temporary);
//     gitleaks aws-access-token.
//   - slack-token: (xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,} with a digit.
//     Slack's xoxb- (bot), xoxp- (user), xoxe- (refresh), xapp- (app-level)
//     tokens (api.slack.com, "Token types"); gitleaks slack-bot-token,
//     slack-user-token, slack-app-token, slack-legacy-token.
//   - jwt: eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*. JSON
//     Web Tokens (RFC 7519: three base64url parts, the header a JSON
//     object, hence "eyJ"; the signature may be empty); gitleaks jwt.
//   - bearer-token: "Bearer" in any case, white space, then an RFC 6750
//     b64token ([A-Za-z0-9._~+/-]+=*) of at least 8 bytes, not "REDACTED",
//     with a digit, an upper-case letter after a lower-case one, or two
//     separators ("Bearer authentication." is prose, "Bearer abc.def.ghi"
//     is not). The finding is the token.
//
// Hashes and encoded bodies do not look like keys: a SHA-256 (64 hex) has
// no 32-hex run at a word start followed by ".", and standard base64 has
// no "-", "_" or ".", while AIza and AKIA need a word to start and end
// around an exact length. Every file of the bundled cassettes/ scans clean
// (a test checks it).
//
// # Secret names
//
// IsSecretName says whether a header, query or form key names a secret.
// The name is split into words at every byte that is not a letter or digit
// and at camelCase boundaries ("accessToken" is access+token, "APIKey" is
// API+Key, "X-Api-Key" is x+api+key). It is a secret name when one word is
// a secret word, or a secret word after one or more qualifier words
// written together ("appkey" is app+key, "xapikey" is x+api+key). Matching
// is by word, not substring: "monkey", "keyboard", "max_tokens" and
// "author" are not secret names; "key", "Api-Key", "secretKey", "pwd" are.
//
// The secret words: authorization, auth, cookie, key, token, secret,
// password, passwd, pwd, passphrase, session, organization, org, project,
// signature, sig, credential, credentials, jwt, code (OAuth codes).
//
// The qualifiers: access, account, admin, api, app, auth, bearer, bot,
// client, consumer, csrf, db, id, login, master, oauth, pass, private,
// refresh, root, secret, security, service, session, shared, signing,
// user, x, xsrf.
//
// # Masking
//
// A masked secret shows at most its first four bytes followed by "…"
// ("sk-p…"): see Mask. Detector.Mask masks every finding in a text; Writer
// does it on the fly for console and trace output, a line at a time.
package secret
