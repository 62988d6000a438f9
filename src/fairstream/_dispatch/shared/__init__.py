"""One pool shared by many processes over Redis: leases, Lua, the leader, outages."""
