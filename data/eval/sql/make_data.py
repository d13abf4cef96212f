#!/usr/bin/env python3
"""Generate data.sql for the invented company "Lá Bàng Books & Stationery".

Deterministic: a fixed seed and no dependence on time, locale or hash order.
Running `python3 make_data.py` rewrites data.sql byte for byte.
"""
import datetime as dt
import os
import random

SEED = 20261207
rng = random.Random(SEED)
OUT = os.environ.get("LB_DATA_OUT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "data.sql")

# ---------------------------------------------------------------- branches
BRANCHES = [
    # id, name, city, district, opened, area
    (1, "Lá Bàng Hoàn Kiếm", "Hà Nội", "Hoàn Kiếm", "2016-04-02", 320),
    (2, "Lá Bàng Cầu Giấy", "Hà Nội", "Cầu Giấy", "2018-09-15", 410),
    (3, "Lá Bàng Hải Châu", "Đà Nẵng", "Hải Châu", "2019-06-01", 280),
    (4, "Lá Bàng Quận 1", "TP.HCM", "Quận 1", "2017-01-20", 450),
    (5, "Lá Bàng Thủ Đức", "TP.HCM", "Thủ Đức", "2021-03-08", 360),
    (6, "Lá Bàng Ninh Kiều", "Cần Thơ", "Ninh Kiều", "2020-11-11", 240),
    (7, "Lá Bàng Lê Chân", "Hải Phòng", "Lê Chân", "2022-05-19", 220),
    (8, "Lá Bàng Thuận Hóa", "Huế", "Thuận Hóa", "2024-06-15", 200),
]
BRANCH_WEIGHT = {1: 16, 2: 13, 3: 11, 4: 18, 5: 12, 6: 9, 7: 8, 8: 7}
CITY_BRANCHES = {}
for b in BRANCHES:
    CITY_BRANCHES.setdefault(b[2], []).append(b[0])

# ---------------------------------------------------------------- names
HO = ["Nguyễn", "Trần", "Lê", "Phạm", "Hoàng", "Huỳnh", "Phan", "Vũ", "Võ",
      "Đặng", "Bùi", "Đỗ", "Hồ", "Ngô", "Dương", "Lý", "Trịnh", "Đinh"]
HO_W = [30, 14, 11, 8, 6, 5, 5, 4, 4, 3, 3, 3, 2, 2, 2, 1, 1, 1]
DEM_M = ["Văn", "Đức", "Minh", "Quốc", "Hữu", "Thành", "Gia", "Hoàng", "Công", "Tuấn"]
DEM_F = ["Thị", "Ngọc", "Thu", "Thanh", "Minh", "Bảo", "Khánh", "Mai", "Phương", "Kim"]
TEN_M = ["An", "Bình", "Cường", "Dũng", "Đạt", "Hải", "Hiếu", "Hùng", "Khang", "Khoa",
         "Long", "Lộc", "Nam", "Nghĩa", "Phúc", "Quân", "Sơn", "Tài", "Thắng", "Trí",
         "Tùng", "Việt", "Vinh", "Huy", "Kiên"]
TEN_F = ["Anh", "Chi", "Dung", "Giang", "Hà", "Hạnh", "Hoa", "Hương", "Lan", "Linh",
         "Loan", "Mai", "My", "Ngân", "Nhung", "Oanh", "Phương", "Quỳnh", "Tâm", "Thảo",
         "Trang", "Trinh", "Uyên", "Vy", "Yến"]


def person(gender, used):
    while True:
        ho = rng.choices(HO, HO_W)[0]
        if gender == "M":
            name = f"{ho} {rng.choice(DEM_M)} {rng.choice(TEN_M)}"
        else:
            name = f"{ho} {rng.choice(DEM_F)} {rng.choice(TEN_F)}"
        if name not in used:
            used.add(name)
            return name


def d2s(d):
    return d.isoformat()


def s2d(s):
    return dt.date.fromisoformat(s)


def rand_date(lo, hi):
    lo, hi = s2d(lo), s2d(hi)
    return lo + dt.timedelta(days=rng.randint(0, (hi - lo).days))


# ---------------------------------------------------------------- staff (5 per branch)
used_names = set()
STAFF = []
ROLES = ["store_manager", "cashier", "sales_associate", "sales_associate", "warehouse"]
sid = 0
for b in BRANCHES:
    for role in ROLES:
        sid += 1
        g = rng.choice(["M", "F"])
        name = person(g, used_names)
        if role == "store_manager":
            hire = s2d(b[4]) - dt.timedelta(days=rng.randint(20, 45))
        elif b[0] == 8:
            hire = rand_date("2024-05-01", "2024-06-10")
        else:
            hire_lo = max(s2d(b[4]) - dt.timedelta(days=60), s2d("2016-01-01"))
            hire = rand_date(d2s(hire_lo), "2023-06-30")
        active = 1
        STAFF.append([sid, name, b[0], role, d2s(hire), active])
# a few people left the company (mid-2024); their sales stop before 2024-07-01
for s in STAFF:
    if s[0] in (9, 18, 24, 33):
        s[5] = 0

# ---------------------------------------------------------------- suppliers
SUPPLIERS = [
    (1, "Công ty Phát hành Sách Trúc Lâm", "Hà Nội", "publisher"),
    (2, "Nhà xuất bản Mây Hồng", "Hà Nội", "publisher"),
    (3, "Công ty Văn hóa Đồi Thông", "TP.HCM", "publisher"),
    (4, "Công ty Sách Ngoại văn Cầu Vồng", "TP.HCM", "publisher"),
    (5, "Công ty TNHH Văn phòng phẩm Thiên Lý", "Hà Nội", "stationery"),
    (6, "Công ty CP Bút Giấy Sông Lam", "Nghệ An", "stationery"),
    (7, "Công ty TNHH Dụng cụ Học tập Hoa Sen Vàng", "TP.HCM", "stationery"),
    (8, "Xưởng Gốm và Thủ công Lam Điền", "Quảng Nam", "gift"),
    (9, "Công ty Quà tặng Hạt Cườm", "TP.HCM", "gift"),
    (10, "Công ty Sách Thiếu nhi Chong Chóng", "Hà Nội", "publisher"),
]

# ---------------------------------------------------------------- products
# (name, category, supplier, price, active)
P = [
    ("Mùa Hạ Trên Đồi Chè", "Sách văn học", 1, 98000, 1),
    ("Người Gác Hải Đăng Cuối Cùng", "Sách văn học", 2, 135000, 1),
    ("Phố Cũ Mưa Bay", "Sách văn học", 1, 86000, 1),
    ("Chuyến Tàu Đêm Lào Cai", "Sách văn học", 3, 112000, 1),
    ("Những Lá Thư Không Gửi", "Sách văn học", 2, 79000, 1),
    ("Bên Kia Sông Hương", "Sách văn học", 3, 145000, 1),
    ("Gió Bấc Tháng Chạp", "Sách văn học", 1, 92000, 1),
    ("Cô Gái Bán Cau Chợ Nổi", "Sách văn học", 3, 88000, 1),
    ("Trăng Rằm Xóm Chài", "Sách văn học", 2, 102000, 1),
    ("Ngõ Nhỏ Có Cây Bàng", "Sách văn học", 1, 119000, 1),
    ("Hạt Muối Biển Đông", "Sách văn học", 3, 168000, 1),
    ("Tuyển Tập Truyện Ngắn Sương Sớm", "Sách văn học", 2, 235000, 0),
    ("Bé Su Đi Chợ Tết", "Sách thiếu nhi", 10, 45000, 1),
    ("Chú Voi Con Biết Bay", "Sách thiếu nhi", 10, 52000, 1),
    ("Cuộc Phiêu Lưu Của Hạt Đậu", "Sách thiếu nhi", 10, 58000, 1),
    ("Khủng Long Tí Hon Học Đếm", "Sách thiếu nhi", 10, 49000, 1),
    ("Gấu Mun Và Bầu Trời Sao", "Sách thiếu nhi", 2, 64000, 1),
    ("Sóc Nâu Tìm Nhà", "Sách thiếu nhi", 10, 47000, 1),
    ("Công Chúa Lúa Non", "Sách thiếu nhi", 2, 72000, 1),
    ("Tô Màu Động Vật Rừng Xanh", "Sách thiếu nhi", 10, 35000, 1),
    ("Truyện Kể Trước Giờ Ngủ - Tập 1", "Sách thiếu nhi", 10, 89000, 1),
    ("Truyện Kể Trước Giờ Ngủ - Tập 2", "Sách thiếu nhi", 10, 89000, 1),
    ("Quản Lý Thời Gian Cho Người Bận Rộn", "Sách kỹ năng", 3, 128000, 1),
    ("Nói Sao Cho Khách Nghe", "Sách kỹ năng", 3, 115000, 1),
    ("Tài Chính Cá Nhân Từ Số 0", "Sách kỹ năng", 1, 149000, 1),
    ("Thói Quen Buổi Sáng", "Sách kỹ năng", 1, 96000, 1),
    ("Viết Email Chuyên Nghiệp", "Sách kỹ năng", 3, 109000, 1),
    ("Làm Việc Nhóm Không Mệt", "Sách kỹ năng", 1, 124000, 1),
    ("Tư Duy Bảng Tính", "Sách kỹ năng", 3, 189000, 1),
    ("Học Cách Từ Chối", "Sách kỹ năng", 2, 99000, 0),
    ("Tiếng Anh Giao Tiếp 90 Ngày", "Sách ngoại ngữ", 4, 156000, 1),
    ("Ngữ Pháp Tiếng Anh Căn Bản", "Sách ngoại ngữ", 4, 138000, 1),
    ("Luyện Nghe Tiếng Anh Trình Độ B1", "Sách ngoại ngữ", 4, 175000, 1),
    ("Tiếng Nhật Sơ Cấp N5", "Sách ngoại ngữ", 4, 198000, 1),
    ("Tiếng Hàn Cho Người Mới Bắt Đầu", "Sách ngoại ngữ", 4, 165000, 1),
    ("Từ Điển Anh - Việt Bỏ Túi", "Sách ngoại ngữ", 4, 69000, 1),
    ("Tiếng Trung Du Lịch", "Sách ngoại ngữ", 4, 118000, 1),
    ("3000 Từ Vựng Tiếng Anh Thông Dụng", "Sách ngoại ngữ", 4, 84000, 1),
    ("Bút bi Lá Bàng 0.5mm (hộp 20)", "Văn phòng phẩm", 6, 62000, 1),
    ("Bút gel mực xanh (hộp 12)", "Văn phòng phẩm", 6, 78000, 1),
    ("Sổ tay bìa da A5", "Văn phòng phẩm", 5, 125000, 1),
    ("Giấy in A4 70gsm (ram 500 tờ)", "Văn phòng phẩm", 5, 76000, 1),
    ("Kẹp giấy inox (hộp 100)", "Văn phòng phẩm", 5, 18000, 1),
    ("Băng keo trong 5cm", "Văn phòng phẩm", 5, 12000, 1),
    ("Bìa hồ sơ nhựa (xấp 10)", "Văn phòng phẩm", 7, 39000, 1),
    ("Bút dạ quang 5 màu", "Văn phòng phẩm", 6, 45000, 1),
    ("Sổ lò xo A4 200 trang", "Văn phòng phẩm", 5, 54000, 1),
    ("Máy tính bỏ túi 12 số", "Văn phòng phẩm", 7, 285000, 1),
    ("Vở ô li 96 trang (lốc 10)", "Dụng cụ học tập", 6, 95000, 1),
    ("Bộ thước kẻ 4 món", "Dụng cụ học tập", 7, 28000, 1),
    ("Hộp bút chì màu 24 màu", "Dụng cụ học tập", 7, 89000, 1),
    ("Cặp sách chống gù", "Dụng cụ học tập", 7, 495000, 1),
    ("Bút chì 2B (hộp 12)", "Dụng cụ học tập", 6, 36000, 1),
    ("Gọt bút chì để bàn", "Dụng cụ học tập", 7, 68000, 1),
    ("Bảng con kèm phấn", "Dụng cụ học tập", 7, 32000, 0),
    ("Bookmark gỗ khắc chữ", "Quà lưu niệm", 8, 25000, 1),
    ("Cốc sứ họa tiết lá bàng", "Quà lưu niệm", 8, 115000, 1),
    ("Túi vải canvas Lá Bàng", "Quà lưu niệm", 9, 89000, 1),
    ("Lịch để bàn 2024", "Quà lưu niệm", 9, 65000, 0),
    ("Hộp quà sổ và bút", "Quà lưu niệm", 9, 265000, 1),
]
CAT_CODE = {"Sách văn học": "VH", "Sách thiếu nhi": "TN", "Sách kỹ năng": "KN",
            "Sách ngoại ngữ": "NN", "Văn phòng phẩm": "VP", "Dụng cụ học tập": "HT",
            "Quà lưu niệm": "QT"}
PRODUCTS = []
cat_count = {}
for i, (name, cat, sup, price, active) in enumerate(P, start=1):
    cat_count[cat] = cat_count.get(cat, 0) + 1
    sku = f"LB-{CAT_CODE[cat]}-{cat_count[cat]:03d}"
    PRODUCTS.append((i, sku, name, cat, sup, price, active))
# popularity weights (some best sellers, some slow movers)
POP = {}
for p in PRODUCTS:
    base = {"Sách văn học": 3.0, "Sách thiếu nhi": 3.2, "Sách kỹ năng": 2.6,
            "Sách ngoại ngữ": 2.4, "Văn phòng phẩm": 3.6, "Dụng cụ học tập": 3.0,
            "Quà lưu niệm": 1.6}[p[3]]
    POP[p[0]] = base * rng.uniform(0.35, 1.9)
POP[39] *= 2.2   # bút bi: best seller by quantity
POP[31] *= 1.8   # Tiếng Anh Giao Tiếp 90 Ngày
POP[13] *= 1.6   # Bé Su Đi Chợ Tết (Tết season)
POP[52] *= 0.5   # cặp sách: expensive, rare

# ---------------------------------------------------------------- customers
CUST_CITIES = ["Hà Nội", "TP.HCM", "Đà Nẵng", "Cần Thơ", "Hải Phòng", "Huế",
               "Bình Dương", "Đồng Nai", "Nha Trang", "Bắc Ninh"]
CUST_CITY_W = [30, 32, 12, 9, 7, 5, 6, 4, 3, 3]
TIERS = ["standard", "silver", "gold", "vip"]
TIER_W = [58, 22, 13, 7]
CUSTOMERS = []
for cid in range(1, 151):
    g = rng.choices(["F", "M"], [56, 44])[0]
    name = person(g, used_names)
    city = rng.choices(CUST_CITIES, CUST_CITY_W)[0]
    tier = rng.choices(TIERS, TIER_W)[0]
    joined = rand_date("2020-01-01", "2025-06-30")
    if rng.random() < 0.7:
        joined = rand_date("2020-01-01", "2022-12-31")
    CUSTOMERS.append((cid, name, g, city, tier, d2s(joined)))
# customers 141-150 joined in late 2025 and mostly have not bought yet
for i in range(140, 150):
    c = CUSTOMERS[i]
    CUSTOMERS[i] = (c[0], c[1], c[2], c[3], c[4] if c[4] != "vip" else "standard",
                    d2s(rand_date("2025-10-01", "2025-12-20")))
ACTIVE_BUYERS = [c for c in CUSTOMERS if c[0] <= 140]
BUYER_W = [rng.uniform(0.3, 3.0) * (2.2 if c[4] in ("gold", "vip") else 1.0)
           for c in ACTIVE_BUYERS]

# ---------------------------------------------------------------- orders
YEAR_N = {2023: 170, 2024: 200, 2025: 230}
MONTH_W = [14, 11, 7, 7, 7, 8, 8, 13, 12, 8, 8, 10]   # Tết + back-to-school peaks
DISC = {"standard": 0.0, "silver": 0.03, "gold": 0.05, "vip": 0.10}

order_dates = []
for year, n in YEAR_N.items():
    for _ in range(n):
        m = rng.choices(range(1, 13), MONTH_W)[0]
        last = (dt.date(year + (m == 12), m % 12 + 1, 1) - dt.timedelta(days=1)).day
        order_dates.append(dt.date(year, m, rng.randint(1, last)))
order_dates.sort()

ORDERS = []
ITEMS = []
oiid = 0
for oid, od in enumerate(order_dates, start=1):
    # customer who had already joined
    while True:
        c = rng.choices(ACTIVE_BUYERS, BUYER_W)[0]
        if s2d(c[5]) <= od:
            break
    online_p = {2023: 0.22, 2024: 0.30, 2025: 0.38}[od.year]
    channel = "online" if rng.random() < online_p else "store"
    open_branches = [b for b in BRANCHES if s2d(b[4]) <= od]
    if channel == "online":
        region = {"Hà Nội": 1, "Hải Phòng": 1, "Bắc Ninh": 1, "Đà Nẵng": 3, "Huế": 3,
                  "Nha Trang": 3}.get(c[3], 4)
        branch_id = region
        staff_id = None
        pay = rng.choices(["e_wallet", "bank_transfer", "cod"], [45, 25, 30])[0]
    else:
        local = [b for b in CITY_BRANCHES.get(c[3], []) if s2d(BRANCHES[b - 1][4]) <= od]
        if local and rng.random() < 0.85:
            branch_id = rng.choice(local)
        else:
            branch_id = rng.choices([b[0] for b in open_branches],
                                    [BRANCH_WEIGHT[b[0]] for b in open_branches])[0]
        cands = [s for s in STAFF if s[2] == branch_id and s[3] != "warehouse"
                 and s2d(s[4]) <= od and (s[5] == 1 or od < s2d("2024-07-01"))]
        staff_id = rng.choice(cands)[0]
        pay = rng.choices(["cash", "card", "e_wallet"], [40, 25, 35])[0]
    r = rng.random()
    if od >= s2d("2025-12-24") and r < 0.6:
        status = "pending"
    elif r < 0.07:
        status = "cancelled"
    elif r < 0.12:
        status = "returned"
    else:
        status = "completed"
    ORDERS.append((oid, c[0], branch_id, staff_id, d2s(od), channel, pay, status))

    n_items = rng.choices([1, 2, 3, 4, 5], [25, 30, 25, 12, 8])[0]
    avail = [p for p in PRODUCTS if p[6] == 1 or od < s2d("2025-01-01")]
    if od >= s2d("2025-01-01"):
        avail = [p for p in avail if p[0] != 59]   # lịch 2024 no longer sold
    chosen = []
    while len(chosen) < n_items:
        p = rng.choices(avail, [POP[q[0]] for q in avail])[0]
        if p not in chosen:
            chosen.append(p)
    for p in chosen:
        oiid += 1
        if p[3] in ("Văn phòng phẩm", "Dụng cụ học tập"):
            qty = rng.choices([1, 2, 3, 4, 5, 10], [35, 25, 15, 10, 10, 5])[0]
        else:
            qty = rng.choices([1, 2, 3], [78, 17, 5])[0]
        price = p[5]
        if od.year < 2025 and p[3].startswith("Sách"):
            price = int(round(p[5] * 0.95 / 1000.0)) * 1000   # 2025 price rise on books
        if od.year == 2023 and not p[3].startswith("Sách"):
            price = int(round(p[5] * 0.97 / 1000.0)) * 1000
        gross = qty * price
        disc = int(round(gross * DISC[c[4]] / 100.0)) * 100
        ITEMS.append((oiid, oid, p[0], qty, price, disc, gross - disc))


# ---------------------------------------------------------------- write
def lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + str(v).replace("'", "''") + "'"


def inserts(table, cols, rows):
    head = f"INSERT INTO {table} ({', '.join(cols)}) VALUES "
    return [head + "(" + ", ".join(lit(v) for v in r) + ");" for r in rows]


lines = [
    "-- Lá Bàng Books & Stationery -- invented data, generated by make_data.py (seed %d)." % SEED,
    "-- Do not edit by hand: run `python3 make_data.py` to regenerate.",
    "BEGIN;",
]
lines += inserts("branches", ["branch_id", "branch_name", "city", "district", "opened_date", "area_m2"], BRANCHES)
lines += inserts("staff", ["staff_id", "full_name", "branch_id", "role", "hire_date", "is_active"], STAFF)
lines += inserts("suppliers", ["supplier_id", "supplier_name", "city", "supplier_type"], SUPPLIERS)
lines += inserts("products", ["product_id", "sku", "product_name", "category", "supplier_id", "list_price", "is_active"], PRODUCTS)
lines += inserts("customers", ["customer_id", "full_name", "gender", "city", "tier", "joined_date"], CUSTOMERS)
lines += inserts("orders", ["order_id", "customer_id", "branch_id", "staff_id", "order_date", "channel", "payment_method", "status"], ORDERS)
lines += inserts("order_items", ["order_item_id", "order_id", "product_id", "quantity", "unit_price", "discount_amount", "line_amount"], ITEMS)
lines.append("COMMIT;")

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    f.write("\n".join(lines) + "\n")
print(f"wrote {OUT}: {len(BRANCHES)} branches, {len(STAFF)} staff, {len(SUPPLIERS)} suppliers, "
      f"{len(PRODUCTS)} products, {len(CUSTOMERS)} customers, {len(ORDERS)} orders, {len(ITEMS)} items")
