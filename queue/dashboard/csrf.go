package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
)

// cookieName is the cookie whose HMAC is the forms' token.
const cookieName = "ria_dashboard_csrf"

// token returns the forms' token for cookie value v.
func (h *Handler) token(v string) string {
	m := hmac.New(sha256.New, h.secret)
	m.Write([]byte(v))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// session returns the request's cookie value, setting a new cookie if it
// has none (or a malformed one).
func (h *Handler) session(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(cookieName); err == nil && len(c.Value) == 43 {
		if _, err := base64.RawURLEncoding.DecodeString(c.Value); err == nil {
			return c.Value
		}
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: v, Path: h.base + "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	return v
}

// allowed reports whether POST request r may act: a valid token for its
// cookie, and no header saying it comes from another site.
func (h *Handler) allowed(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) || (u.Scheme != "http" && u.Scheme != "https") {
			return false
		}
	}
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return false
	}
	got := r.PostFormValue("csrf")
	return got != "" && hmac.Equal([]byte(got), []byte(h.token(c.Value)))
}
