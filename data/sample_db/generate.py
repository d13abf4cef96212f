"""Writes bank.sql: the sample bank's data warehouse (branches, staff, customers, loans, deposits),
the same bytes on every run (a fixed seed). ``make chat`` builds .turnrag/sample_bank.sqlite3 from
bank.sql on first run; PostgreSQL loads the same file (``psql -f bank.sql``).

    python data/sample_db/generate.py          # rewrite bank.sql
    python data/sample_db/generate.py --check  # exit 1 when bank.sql is not what this writes
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE / "bank.sql"
SEED = 44

BRANCHES = [  # code, name, city, region, opened
    ("HN01", "Chi nhánh Hoàn Kiếm", "Hà Nội", "Miền Bắc", "2008-03-01"),
    ("HN02", "Chi nhánh Cầu Giấy", "Hà Nội", "Miền Bắc", "2012-09-15"),
    ("HP01", "Chi nhánh Hải Phòng", "Hải Phòng", "Miền Bắc", "2014-05-20"),
    ("DN01", "Chi nhánh Đà Nẵng", "Đà Nẵng", "Miền Trung", "2010-07-01"),
    ("HU01", "Chi nhánh Huế", "Huế", "Miền Trung", "2017-11-11"),
    ("SG01", "Chi nhánh Quận 1", "TP. Hồ Chí Minh", "Miền Nam", "2009-01-05"),
    ("SG02", "Chi nhánh Thủ Đức", "TP. Hồ Chí Minh", "Miền Nam", "2015-04-18"),
    ("CT01", "Chi nhánh Cần Thơ", "Cần Thơ", "Miền Nam", "2016-08-08"),
]
FAMILY = ["Nguyễn", "Trần", "Lê", "Phạm", "Hoàng", "Huỳnh", "Phan", "Vũ", "Võ", "Đặng", "Bùi", "Đỗ", "Hồ", "Ngô"]
MIDDLE = ["Văn", "Thị", "Hữu", "Minh", "Thanh", "Ngọc", "Quốc", "Thu", "Đức", "Hoài", "Gia", "Bảo"]
GIVEN = ["An", "Bình", "Chi", "Dũng", "Giang", "Hà", "Hải", "Hạnh", "Hiếu", "Hoa", "Hùng", "Huy", "Khánh", "Lan",
         "Linh", "Long", "Mai", "Nam", "Ngân", "Phong", "Phúc", "Quân", "Sơn", "Tâm", "Thảo", "Trang", "Trung", "Tuấn",
         "Vy", "Yến"]
POSITIONS = [("giám đốc chi nhánh", 1, 65_000_000), ("trưởng phòng", 1, 42_000_000),
             ("chuyên viên tín dụng", 3, 24_000_000), ("giao dịch viên", 3, 15_000_000)]
SEGMENTS = [("cá nhân", 0.85), ("doanh nghiệp", 0.15)]
LOAN_PRODUCTS = [  # product, principal range (million VND), rate range, terms (months)
    ("vay mua nhà", (800, 5_000), (7.5, 9.5), (120, 180, 240, 300)),
    ("vay mua ô tô", (300, 1_500), (8.0, 10.5), (36, 60, 84)),
    ("vay tiêu dùng", (30, 300), (11.0, 16.0), (12, 24, 36, 48)),
    ("vay kinh doanh", (500, 8_000), (8.5, 11.5), (12, 24, 36, 60)),
]
DEPOSIT_PRODUCTS = [("tiết kiệm có kỳ hạn", (6, 12, 24, 36)), ("tiền gửi không kỳ hạn", (0,))]

SCHEMA = """\
-- The sample bank's data warehouse (fictional). Written by data/sample_db/generate.py; do not edit by hand.
-- Money in Vietnamese dong (VND); rates in percent a year; dates YYYY-MM-DD.
CREATE TABLE branches (
    id INTEGER PRIMARY KEY,
    code TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    region TEXT NOT NULL,
    opened_on DATE NOT NULL
);
CREATE TABLE staff (
    id INTEGER PRIMARY KEY,
    branch_id INTEGER NOT NULL REFERENCES branches(id),
    full_name TEXT NOT NULL,
    position TEXT NOT NULL,
    hired_on DATE NOT NULL,
    monthly_salary BIGINT NOT NULL
);
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    branch_id INTEGER NOT NULL REFERENCES branches(id),
    full_name TEXT NOT NULL,
    segment TEXT NOT NULL,
    city TEXT NOT NULL,
    birth_year INTEGER,
    joined_on DATE NOT NULL
);
CREATE TABLE loans (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    branch_id INTEGER NOT NULL REFERENCES branches(id),
    product TEXT NOT NULL,
    principal BIGINT NOT NULL,
    outstanding BIGINT NOT NULL,
    interest_rate NUMERIC(5, 2) NOT NULL,
    term_months INTEGER NOT NULL,
    disbursed_on DATE NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE deposits (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    branch_id INTEGER NOT NULL REFERENCES branches(id),
    product TEXT NOT NULL,
    balance BIGINT NOT NULL,
    interest_rate NUMERIC(5, 2) NOT NULL,
    term_months INTEGER NOT NULL,
    opened_on DATE NOT NULL
);
"""


def _name(rng: random.Random) -> str:
    return f"{rng.choice(FAMILY)} {rng.choice(MIDDLE)} {rng.choice(GIVEN)}"


def _day(rng: random.Random, start: str, end: str = "2026-11-30") -> str:
    a, b = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    return (a + dt.timedelta(days=rng.randrange((b - a).days + 1))).isoformat()


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def _insert(table: str, columns: list[str], rows: list[tuple]) -> str:
    """One INSERT per 50 rows: both SQLite and PostgreSQL read multi-row VALUES."""
    out = []
    for i in range(0, len(rows), 50):
        values = ",\n".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows[i:i + 50])
        out.append(f"INSERT INTO {table} ({', '.join(columns)}) VALUES\n{values};")
    return "\n".join(out)


def render() -> str:
    rng = random.Random(SEED)
    branches = [(i, *b) for i, b in enumerate(BRANCHES, start=1)]
    staff = []
    for branch_id, *_ in branches:
        for position, count, salary in POSITIONS:
            for _ in range(count + rng.randrange(0, 3 if count > 1 else 1)):
                pay = int(salary * rng.uniform(0.85, 1.25) / 100_000) * 100_000
                staff.append((len(staff) + 1, branch_id, _name(rng), position, _day(rng, "2010-01-01"), pay))
    customers = []
    for i in range(1, 401):
        branch = rng.choices(branches, weights=[5, 4, 2, 3, 1, 6, 3, 2])[0]
        segment = rng.choices([s for s, _ in SEGMENTS], weights=[w for _, w in SEGMENTS])[0]
        birth = None if segment == "doanh nghiệp" else rng.randrange(1955, 2005)
        customers.append((i, branch[0], _name(rng) if segment == "cá nhân" else f"Công ty TNHH {rng.choice(GIVEN)} "
                          f"{rng.choice(['Phát', 'Thịnh', 'Hưng', 'Việt', 'Á Châu'])}", segment, branch[3], birth,
                          _day(rng, max(branch[5], "2012-01-01"))))
    loans = []
    for i in range(1, 501):
        customer = rng.choice(customers)
        product, (low, high), (r_low, r_high), terms = rng.choice(LOAN_PRODUCTS)
        principal = rng.randrange(low, high + 1) * 1_000_000
        status = rng.choices(["đang vay", "đã tất toán", "quá hạn"], weights=[70, 22, 8])[0]
        outstanding = 0 if status == "đã tất toán" else int(principal * rng.uniform(0.2, 1.0) / 1_000_000) * 1_000_000
        loans.append((i, customer[0], customer[1], product, principal, outstanding,
                      round(rng.uniform(r_low, r_high), 2), rng.choice(terms), _day(rng, customer[6]), status))
    deposits = []
    for i in range(1, 601):
        customer = rng.choice(customers)
        product, terms = rng.choice(DEPOSIT_PRODUCTS)
        term = rng.choice(terms)
        rate = 0.5 if term == 0 else round(4.0 + term / 12 * 0.6 + rng.uniform(-0.3, 0.3), 2)
        deposits.append((i, customer[0], customer[1], product, rng.randrange(5, 3_000) * 1_000_000, rate, term,
                         _day(rng, customer[6])))
    parts = [SCHEMA,
             _insert("branches", ["id", "code", "name", "city", "region", "opened_on"], branches),
             _insert("staff", ["id", "branch_id", "full_name", "position", "hired_on", "monthly_salary"], staff),
             _insert("customers", ["id", "branch_id", "full_name", "segment", "city", "birth_year", "joined_on"],
                     customers),
             _insert("loans", ["id", "customer_id", "branch_id", "product", "principal", "outstanding", "interest_rate",
                               "term_months", "disbursed_on", "status"], loans),
             _insert("deposits", ["id", "customer_id", "branch_id", "product", "balance", "interest_rate", "term_months",
                                  "opened_on"], deposits)]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with bank.sql instead of writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text
        print("bank.sql is up to date" if same else "bank.sql differs: run python data/sample_db/generate.py")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
