cat > /workspace/deploy/nginx.conf <<'CONF'
worker_processes 1;
pid /tmp/dashboard-nginx.pid;
error_log /tmp/dashboard.error.log;

events {
    worker_connections 64;
}

http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /tmp/dashboard.access.log;
    client_body_temp_path /tmp/dashboard-body;
    proxy_temp_path /tmp/dashboard-proxy;
    fastcgi_temp_path /tmp/dashboard-fastcgi;
    uwsgi_temp_path /tmp/dashboard-uwsgi;
    scgi_temp_path /tmp/dashboard-scgi;

    server {
        listen 127.0.0.1:8090;
        root /workspace/dashboard/dist;
        index index.html;

        location / {
            try_files $uri $uri/ @app;
        }

        location ~ \.[A-Za-z0-9]+$ {
            try_files $uri =404;
        }

        location @app {
            add_header Cache-Control "no-cache";
            rewrite ^ /index.html break;
        }

        location = /index.html {
            add_header Cache-Control "no-cache";
        }

        location ^~ /assets/ {
            add_header Cache-Control "public, max-age=31536000, immutable";
            try_files $uri =404;
        }

        location ^~ /api/ {
            proxy_pass http://127.0.0.1:9200;
        }
    }
}
CONF
nginx -p /workspace/deploy/ -c /workspace/deploy/nginx.conf -e /tmp/nginx-startup.log -t
