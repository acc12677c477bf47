mkdir -p /workspace/nginx && cat > /workspace/nginx/nginx.conf <<'CONF'
pid /tmp/nginx-proxy.pid;
error_log /tmp/nginx-proxy-error.log;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    access_log /tmp/nginx-proxy-access.log;
    client_body_temp_path /tmp/nginx-proxy-body;
    proxy_temp_path /tmp/nginx-proxy-proxy;
    fastcgi_temp_path /tmp/nginx-proxy-fastcgi;
    uwsgi_temp_path /tmp/nginx-proxy-uwsgi;
    scgi_temp_path /tmp/nginx-proxy-scgi;
    client_max_body_size 1m;
    gzip on;
    gzip_types application/javascript text/javascript text/css;
    gzip_min_length 20;
    server {
        listen 127.0.0.1:8081;
        location /api/ {
            proxy_pass http://127.0.0.1:9100/;
            proxy_set_header Host $http_host;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_intercept_errors on;
            error_page 502 504 = @api_down;
        }
        location @api_down {
            default_type application/json;
            return 503 '{"error": "api unavailable"}';
        }
        location /static/ { alias /workspace/app/static/; }
    }
}
CONF
nginx -p /workspace/nginx/ -c /workspace/nginx/nginx.conf -e /tmp/nginx-startup.log -t
