package server

import "testing"

func TestParseCommandStats(t *testing.T) {
	info := "# Commandstats\r\n" +
		"cmdstat_set:calls=5,usec=10,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_evalsha:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=1\r\n" +
		"cmdstat_config|resetstat:calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_client|setinfo:calls=4,usec=4,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=2,usec=50,usec_per_call=25.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_ping:calls=7,usec=7,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hello:calls=2,usec=7,usec_per_call=3.50,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_select:calls=2,usec=2,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n"
	got, err := ParseCommandStats(info)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["set"] != 5 || got["evalsha"] != 3 {
		t.Errorf("ParseCommandStats = %v, want map[evalsha:3 set:5]", got)
	}
	if got.Total() != 8 {
		t.Errorf("Total = %d, want 8", got.Total())
	}
	if _, err := ParseCommandStats("cmdstat_get:usec=1\r\n"); err == nil {
		t.Error("ParseCommandStats accepted a line without calls")
	}
}
