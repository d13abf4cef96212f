-- Lá Bàng Books & Stationery (Công ty CP Sách và Văn phòng phẩm Lá Bàng) -- invented company.
-- Portable DDL: runs on SQLite 3 and PostgreSQL 13+.
-- Dates are declared DATE; in SQLite they are stored as ISO text 'YYYY-MM-DD'.
-- Money is VND, whole đồng, BIGINT.

CREATE TABLE branches (
    branch_id     INTEGER PRIMARY KEY,
    branch_name   TEXT    NOT NULL,
    city          TEXT    NOT NULL,
    district      TEXT    NOT NULL,
    opened_date   DATE    NOT NULL,
    area_m2       INTEGER NOT NULL
);

CREATE TABLE staff (
    staff_id      INTEGER PRIMARY KEY,
    full_name     TEXT    NOT NULL,
    branch_id     INTEGER NOT NULL REFERENCES branches(branch_id),
    role          TEXT    NOT NULL,
    hire_date     DATE    NOT NULL,
    is_active     INTEGER NOT NULL
);

CREATE TABLE suppliers (
    supplier_id   INTEGER PRIMARY KEY,
    supplier_name TEXT    NOT NULL,
    city          TEXT    NOT NULL,
    supplier_type TEXT    NOT NULL
);

CREATE TABLE products (
    product_id    INTEGER PRIMARY KEY,
    sku           TEXT    NOT NULL UNIQUE,
    product_name  TEXT    NOT NULL,
    category      TEXT    NOT NULL,
    supplier_id   INTEGER NOT NULL REFERENCES suppliers(supplier_id),
    list_price    BIGINT  NOT NULL,
    is_active     INTEGER NOT NULL
);

CREATE TABLE customers (
    customer_id   INTEGER PRIMARY KEY,
    full_name     TEXT    NOT NULL,
    gender        TEXT    NOT NULL,
    city          TEXT    NOT NULL,
    tier          TEXT    NOT NULL,
    joined_date   DATE    NOT NULL
);

CREATE TABLE orders (
    order_id       INTEGER PRIMARY KEY,
    customer_id    INTEGER NOT NULL REFERENCES customers(customer_id),
    branch_id      INTEGER NOT NULL REFERENCES branches(branch_id),
    staff_id       INTEGER REFERENCES staff(staff_id),
    order_date     DATE    NOT NULL,
    channel        TEXT    NOT NULL,
    payment_method TEXT    NOT NULL,
    status         TEXT    NOT NULL
);

CREATE TABLE order_items (
    order_item_id   INTEGER PRIMARY KEY,
    order_id        INTEGER NOT NULL REFERENCES orders(order_id),
    product_id      INTEGER NOT NULL REFERENCES products(product_id),
    quantity        INTEGER NOT NULL,
    unit_price      BIGINT  NOT NULL,
    discount_amount BIGINT  NOT NULL,
    line_amount     BIGINT  NOT NULL
);
