mkdir -p /workspace/redis/data && cat > /workspace/redis/redis.conf <<'CONF'
bind 127.0.0.1
port 6390
requirepass orchard-7
dir /workspace/redis/data
dbfilename users.rdb
appendonly no
save 3600 1
logfile /tmp/redis-users.log
pidfile /tmp/redis-users.pid
daemonize no
CONF
cd /workspace && redis-server /workspace/redis/redis.conf --daemonize yes && sleep 1 \
&& python3 - <<'PY' | redis-cli -p 6390 -a orchard-7 --no-auth-warning > /dev/null
import csv
for row in csv.DictReader(open("data/users.csv")):
    def q(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    print(f"HSET user:{row['id']} name {q(row['name'])} email {q(row['email'])} plan {q(row['plan'])}")
    print(f"ZADD users:by_signup {row['signup_day']} {row['id']}")
    print(f"SADD plan:{row['plan']} {row['id']}")
PY
redis-cli -p 6390 -a orchard-7 --no-auth-warning SAVE && redis-cli -p 6390 -a orchard-7 --no-auth-warning SHUTDOWN NOSAVE; sleep 0.5; ls -la /workspace/redis/data
