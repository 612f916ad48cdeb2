package geoip_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
)

// A GeoLite City data set none of whose blocks has a location (a
// locations file of header lines only) has no records HASH: a lookup finds
// its range with an empty record, as for any block whose location is
// missing (it used to take the missing HASH for a data set replaced under
// it, and fail every try).
func TestLookup_geoLiteWithoutLocations(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		locations := "Copyright (c) 2012 MaxMind LLC.  All Rights Reserved.\n" +
			"locId,country,region,city,postalCode,latitude,longitude,metroCode,areaCode\n"
		blocks := "startIpNum,endIpNum,locId\n" +
			"\"16777216\",\"16777471\",\"17\"\n" // 1.0.0.0 - 1.0.0.255, no location
		db := newDB(t, b, "nolocs")
		p, err := db.ImportGeoLiteCity(ctx, strings.NewReader(blocks), strings.NewReader(locations))
		require.NoError(t, err)
		assert.EqualValues(t, 1, p.Ranges)
		r, err := db.Lookup(ctx, netip.MustParseAddr("1.0.0.7"))
		require.NoError(t, err)
		assert.Equal(t, netip.MustParseAddr("1.0.0.0"), r.Start)
	})
}
