package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/queue"
	"github.com/ria-go/ria/queue/dashboard"
)

// reviewGroup is a group with n ready tasks in "email".
func reviewGroup(t *testing.T, b *redistest.Backend, n int) *queue.Group {
	t.Helper()
	g, err := queue.New(b.Client, "shop", queue.WithPrefix(b.Prefix))
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		_, err := g.Enqueue(t.Context(), "email", "welcome", i)
		require.NoError(t, err)
	}
	return g
}

// A page past the last one (the list shrank, or the link was made up)
// redirects to the last page; its Previous link is then the page before.
func TestDashboard_pageBeyondEnd(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		g := reviewGroup(t, b, 3)
		srv := serve(t, g, "/queues", dashboard.WithPageSize(2))
		c := newClient(t, srv, "/queues")
		code, body := c.get("/ready?queue=email&page=50")
		assert.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, body, "page 2 of 2", "the last page")
		assert.NotContains(t, body, "page=49", "no link to another page past the end")
	})
}

// A form larger than the limit is answered 413 Request Entity Too Large.
func TestDashboard_oversizedForm(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		g := reviewGroup(t, b, 0)
		srv := serve(t, g, "/queues")
		c := newClient(t, srv, "/queues")
		tok := c.token("/")
		code, body := c.post(url.Values{"op": {"pause"}, "queue": {"email"}, "csrf": {tok}, "pad": {strings.Repeat("a", 100<<10)}},
			"Origin", c.srv)
		assert.Equal(t, http.StatusRequestEntityTooLarge, code, body)
	})
}
