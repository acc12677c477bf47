mkdir -p /workspace/nginx && cat > /workspace/nginx/nginx.conf <<'CONF'
pid /tmp/nginx-site.pid;
error_log /tmp/nginx-site-error.log;
worker_processes 1;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /tmp/nginx-site-access.log;
    client_body_temp_path /tmp/nginx-site-body;
    proxy_temp_path /tmp/nginx-site-proxy;
    fastcgi_temp_path /tmp/nginx-site-fastcgi;
    uwsgi_temp_path /tmp/nginx-site-uwsgi;
    scgi_temp_path /tmp/nginx-site-scgi;
    server_tokens off;
    server {
        listen 127.0.0.1:8080;
        root /workspace/site/public;
        index index.html;
        autoindex off;
        error_page 404 /404.html;
        location /css/ { add_header Cache-Control "public, max-age=86400"; }
        location = /healthz { default_type text/plain; return 200 "ok"; }
    }
}
CONF
nginx -p /workspace/nginx/ -c /workspace/nginx/nginx.conf -e /tmp/nginx-startup.log -t
