#!/bin/bash -xe
# Create the database users that oslo.db's opportunistic test fixtures log
# in as (openstack_citest / openstack_citest), the way OpenStack projects'
# CI does. Safe to run again. A backend that is not running is skipped:
# its tests then skip with a reason.

DB_ROOT_PW=${MYSQL_ROOT_PW:-}
DB_USER=openstack_citest
DB_PW=openstack_citest

if command -v mysql >/dev/null && \
        mysql -h 127.0.0.1 -u root ${DB_ROOT_PW:+-p$DB_ROOT_PW} \
            -e 'SELECT 1' >/dev/null 2>&1; then
    mysql -h 127.0.0.1 -u root ${DB_ROOT_PW:+-p$DB_ROOT_PW} <<SQL
CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$DB_PW';
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PW';
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'%' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'localhost' WITH GRANT OPTION;
FLUSH PRIVILEGES;
CREATE DATABASE IF NOT EXISTS openstack_citest;
SQL
else
    echo "MySQL/MariaDB is not answering on 127.0.0.1: its tests will skip"
fi

if command -v psql >/dev/null && \
        psql -h 127.0.0.1 -U postgres -c 'SELECT 1' >/dev/null 2>&1; then
    psql -h 127.0.0.1 -U postgres -tc \
        "SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER'" | grep -q 1 || \
        psql -h 127.0.0.1 -U postgres -c \
            "CREATE ROLE $DB_USER WITH LOGIN SUPERUSER PASSWORD '$DB_PW'"
    psql -h 127.0.0.1 -U postgres -tc \
        "SELECT 1 FROM pg_database WHERE datname = 'openstack_citest'" | \
        grep -q 1 || \
        psql -h 127.0.0.1 -U postgres -c \
            "CREATE DATABASE openstack_citest OWNER $DB_USER"
else
    echo "PostgreSQL is not answering on 127.0.0.1: its tests will skip"
fi
